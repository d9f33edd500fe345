// Where a customer goes back to the merchant once the payment is decided: its return_url with the payment's
// id and status (lowercase, as in webhooks). Used by the redirect-return route and by the hosted checkout.

export function returnLocation(returnUrl: string, paymentId: string, status: string): string {
  const location = new URL(returnUrl);
  location.searchParams.set('payment_id', paymentId);
  location.searchParams.set('status', status.toLowerCase());
  return location.toString();
}
