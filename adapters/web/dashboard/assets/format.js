// @ts-check
// Formatting money and time for people. Amounts arrive in minor units with an upper-case
// currency (D2); the exponent comes from the server's currency table, so JPY, KRW and ISK show
// no decimals. Times arrive as Unix seconds and show in the browser's local time zone.
import { exponents } from './currencies.js';

export function exponent(currency) {
  const e = exponents[String(currency || '').toUpperCase()];
  return e === undefined ? 2 : e;
}

export const currencies = Object.keys(exponents).sort();

// money renders 1050 EUR as "€10.50" (in the browser's locale) and 500 JPY as "¥500".
export function money(amount, currency) {
  if (amount === null || amount === undefined) return '—';
  const code = String(currency || '').toUpperCase();
  const exp = exponent(code);
  const major = Number(amount) / 10 ** exp;
  try {
    return new Intl.NumberFormat(undefined, {
      style: 'currency', currency: code, minimumFractionDigits: exp, maximumFractionDigits: exp,
    }).format(major);
  } catch {
    return `${plain(amount, exp)} ${code}`;
  }
}

// plain renders minor units as a decimal string with exp digits ("10.50"), exactly.
export function plain(amount, exp) {
  const neg = amount < 0;
  let s = String(Math.abs(Math.trunc(Number(amount))));
  if (exp > 0) {
    s = s.padStart(exp + 1, '0');
    s = `${s.slice(0, -exp)}.${s.slice(-exp)}`;
  }
  return neg ? `-${s}` : s;
}

// parseAmount turns what a person typed ("12.5", "12,50", "1200") into minor units of currency,
// or returns an error message.
export function parseAmount(text, currency) {
  const exp = exponent(currency);
  const t = String(text).trim().replace(',', '.');
  const m = /^(\d+)(?:\.(\d*))?$/.exec(t);
  if (!m) return { error: 'Enter an amount such as 12.50.' };
  const frac = m[2] || '';
  if (frac.length > exp) {
    return { error: exp === 0 ? `${currency} has no decimals.` : `${currency} has at most ${exp} decimals.` };
  }
  const minor = Number(m[1] + frac.padEnd(exp, '0'));
  if (!Number.isSafeInteger(minor)) return { error: 'The amount is too large.' };
  return { minor };
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateTimeSeconds = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

// when renders Unix seconds as a <time> element in local time; null shows the fallback text.
export function when(seconds, fallback = '—', precise = false) {
  if (seconds === null || seconds === undefined) return document.createTextNode(fallback);
  const d = new Date(Number(seconds) * 1000);
  const t = document.createElement('time');
  t.dateTime = d.toISOString();
  t.title = d.toString();
  t.textContent = (precise ? dateTimeSeconds : dateTime).format(d);
  return t;
}

// badge renders a status word as a badge. Every state has a badge of its own (kassa.css:
// colour, a mark before the word, and the word), so failed, disputed and declined never look
// alike; an unknown word gets the neutral badge.
const badgeStates = new Set([
  'succeeded', 'complete', 'paid', 'enabled', 'active', 'delivered',
  'processing', 'pending', 'scheduled', 'open',
  'failed', 'declined', 'disabled', 'revoked', 'disputed',
  'refunded', 'partially_refunded', 'canceled', 'archived', 'expired',
  'needs_response', 'under_review', 'won', 'lost',
  'trialing', 'incomplete', 'past_due', 'unpaid', 'incomplete_expired',
]);

export function badge(status) {
  const s = document.createElement('span');
  const word = String(status);
  s.className = badgeStates.has(word) ? `badge badge-${word}` : 'badge';
  s.dataset.status = word;
  s.textContent = word.replaceAll('_', ' ');
  return s;
}
