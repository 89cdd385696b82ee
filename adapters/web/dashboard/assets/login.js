// @ts-check
// The sign-in page: posts the e-mail and password to POST /api/v1/session and, on success, goes
// to the page the person came from (a local path only) or to the test overview. Wrong
// credentials and throttling get messages of their own; the password field is cleared after a
// failure and never stored.
import { APIError, request } from './api.js';

const form = document.getElementById('login-form');
const email = /** @type {HTMLInputElement} */ (document.getElementById('login-email'));
const password = /** @type {HTMLInputElement} */ (document.getElementById('login-password'));
const submit = /** @type {HTMLButtonElement} */ (document.getElementById('login-submit'));
const message = document.getElementById('login-message');

// next is where to go after signing in: a path on this origin from ?next=, never another site
// (a dashboard page, or the consent page of an app's authorization request).
function next() {
  const n = new URLSearchParams(location.search).get('next') || '';
  if (/^\/((test|live)\/[A-Za-z0-9_/]*|oauth\/authorize)(\?[^#]*)?$/.test(n) && !n.startsWith('//')) return n;
  return '/test/overview';
}

function show(kind, text) {
  message.className = `notice notice-${kind}`;
  message.textContent = text;
  message.hidden = false;
}

// waitText says how long to wait before the next try, from Retry-After seconds.
function waitText(seconds) {
  if (!seconds) return 'Wait a moment and try again.';
  if (seconds < 90) return `Try again in ${seconds} seconds.`;
  return `Try again in ${Math.ceil(seconds / 60)} minutes.`;
}

function describe(err) {
  if (!(err instanceof APIError)) return 'Signing in failed. Try again.';
  if (err.code === 'credentials_invalid' || err.status === 401) {
    return 'The e-mail address or the password is wrong.';
  }
  if (err.status === 429) {
    return `Too many sign-in attempts. ${waitText(err.retryAfter)}`;
  }
  if (err.status === 400) return err.message || 'Enter your e-mail address and password.';
  if (err.status === 0) return err.message;
  return 'Signing in failed because of a problem on the server. Try again in a moment.';
}

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  message.hidden = true;
  for (const input of [email, password]) input.removeAttribute('aria-invalid');
  if (!email.value.trim()) {
    email.setAttribute('aria-invalid', 'true');
    show('error', 'Enter your e-mail address.');
    email.focus();
    return;
  }
  if (!password.value) {
    password.setAttribute('aria-invalid', 'true');
    show('error', 'Enter your password.');
    password.focus();
    return;
  }
  submit.disabled = true;
  submit.textContent = 'Signing in…';
  try {
    await request('POST', '/session', { email: email.value.trim(), password: password.value }, { auth401: false });
    location.assign(next());
    return;
  } catch (err) {
    show('error', describe(err));
    password.value = '';
    password.focus();
  }
  submit.disabled = false;
  submit.textContent = 'Sign in';
});

// Somebody already signed in goes straight on.
request('GET', '/session', undefined, { auth401: false }).then(() => location.replace(next()), () => {});
submit.disabled = false;
