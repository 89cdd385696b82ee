// @ts-check
// Checkout sessions: the list with a status filter and cursor paging.
import { get, query } from '../api.js';
import { h } from '../dom.js';
import { badge, money, when } from '../format.js';
import { pager, table } from '../ui.js';
import { pageHead, statusFilter } from './common.js';

const statuses = ['open', 'complete', 'expired', 'canceled'];

// payment links a complete session to its payment, and an open one to its hosted payment page
// (a new tab on the checkout origin), so a test session can be paid from here.
function payment(ctx, s) {
  if (s.payment) return h('a', { href: `${ctx.base}/payments/${s.payment.id}`, class: 'mono' }, s.payment.id);
  if (s.status === 'open' && /^https?:\/\//.test(s.checkout_url || '')) {
    return h('a', { href: s.checkout_url, target: '_blank', rel: 'noopener noreferrer', 'data-checkout': s.id }, 'Open payment page ↗');
  }
  return '—';
}

/** @param {import('../types').Ctx} ctx */
export async function list(ctx) {
  ctx.title('Checkout sessions');
  const status = ctx.query.get('status') || '';
  const after = ctx.query.get('starting_after') || '';
  const before = ctx.query.get('ending_before') || '';
  const page = await get(`${ctx.base}/checkout_sessions${query({ status, limit: 20, starting_after: after, ending_before: before })}`);
  const columns = [
    { label: 'Session', cell: (s) => h('span', { class: 'mono' }, s.id) },
    { label: 'Amount', num: true, cell: (s) => money(s.amount, s.currency) },
    { label: 'Status', cell: (s) => badge(s.status) },
    { label: 'Customer', cell: (s) => s.customer_email || s.customer_name || '—' },
    { label: 'Reference', cell: (s) => s.reference || '—' },
    { label: 'Created', cell: (s) => when(s.created) },
    { label: 'Expires', cell: (s) => (s.status === 'open' ? when(s.expires_at) : '—') },
    { label: 'Payment', cell: (s) => payment(ctx, s) },
  ];
  return h('div', null,
    pageHead('Checkout sessions'),
    h('p', { class: 'hint' }, 'Sessions are created with the merchant API (POST /v1/checkout/sessions); each one is a hosted payment page.'),
    statusFilter(ctx, statuses, status),
    table(columns, page.data, status ? `No ${status} sessions.` : 'No checkout sessions yet.', 'Checkout sessions'),
    pager(ctx, page));
}
