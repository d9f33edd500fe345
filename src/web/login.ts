// The dashboard's sign-in page (GET /dashboard/login): posts the email and password to /dashboard/login, which sets the
// session cookie, then opens the dashboard. Opened from an invitation's link (#invitation=…), it sets the new member's
// password through /dashboard/invitations/accept instead. The token leaves the address bar at once, so it is neither
// kept in the history nor shown over a shoulder.
import { byId, showError } from './dom.ts';

const form = byId<HTMLFormElement>('login-form');
const email = byId<HTMLInputElement>('email');
const password = byId<HTMLInputElement>('password');
const alert = byId('alert');

const invitation = new URLSearchParams(location.hash.slice(1)).get('invitation');
if (invitation) {
  history.replaceState(null, '', location.pathname);
  byId('login-heading').textContent = 'Choose your dashboard password';
  byId('email-field').hidden = true;
  email.required = false;
  password.autocomplete = 'new-password';
  byId('login-submit').textContent = 'Set password and sign in';
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const [path, body] = invitation
    ? ['/dashboard/invitations/accept', { token: invitation, password: password.value }]
    : ['/dashboard/login', { email: email.value, password: password.value }];
  try {
    const answer = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (answer.ok) return location.assign('/dashboard');
    const json = (await answer.json()) as { error?: { message?: string; field?: string } };
    const invalid = json.error?.field === 'password' ? password : json.error?.field === 'email' ? email : null;
    showError(alert, invalid, json.error?.message ?? 'Signing in failed.');
  } catch {
    showError(alert, null, 'The service could not be reached; try again.');
  }
});
