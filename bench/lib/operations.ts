// The GraphQL operations the bench sends, to the service and to the no-I/O Yoga ceiling alike: a merchant's
// server creates the payment with its secret key (and an Idempotency-Key), the customer's browser confirms
// it with the publishable key and the client secret, as in the README's "A card payment by hand".
export const CREATE_PAYMENT =
  'mutation Create($input: CreatePaymentInput!) { createPayment(input: $input) { id status amount currency clientSecret createdAt } }';

export const CONFIRM_PAYMENT =
  'mutation Confirm($input: ConfirmPaymentInput!) { confirmPayment(input: $input) { id status amount activeAttempt { id status } } }';

export const createVariables = () => ({ input: { amount: 1050, currency: 'USD', description: 'bench' } });

export const confirmVariables = (clientSecret: string, card: { number: string; expiryMonth: number; expiryYear: number; cvc: string }) => ({
  input: { clientSecret, paymentMethodData: { card } },
});
