// @ts-check
// Payments: the list with a status filter and cursor paging, and one payment with its fee
// breakdown, its dispute (with the evidence form while it needs a response), its refunds (and
// the form to refund it), its ledger entries and events.
import { get, query } from '../api.js';
import { h } from '../dom.js';
import { badge, money, when } from '../format.js';
import { facts, pager, table } from '../ui.js';
import { html, render } from '../preact.js';
import { RefundForm } from './refund_form.js';
import { missing, pageHead, paymentColumns, paymentMethod, statusFilter } from './common.js';
import { disputePanel } from './disputes.js';
import { transactionColumns } from './balance.js';

const statuses = ['succeeded', 'processing', 'failed', 'refunded', 'partially_refunded', 'disputed',
  ['declined', 'declined (charges without a payment)']];

// declineColumns are the columns of a declined-charges table.
function declineColumns() {
  return [
    { label: 'Amount', num: true, cell: (d) => money(d.amount, d.currency) },
    { label: 'Status', cell: () => badge('declined') },
    { label: 'Reason', cell: (d) => (d.kind === 'authentication' ? '3-D Secure check failed' : 'Declined by the processor') },
    { label: 'Method', cell: (d) => (d.payment_method === 'sepa_debit' ? 'SEPA debit' : 'Card') },
    { label: 'Checkout session', cell: (d) => (d.session_id ? h('span', { class: 'mono' }, d.session_id) : '—') },
    { label: 'Try', num: true, cell: (d) => String(d.attempt) },
    { label: 'Date', cell: (d) => when(d.created, '—', true) },
  ];
}

// declinedList is the list of declined charges (they create no payment, so they are not among
// the payments): the latest 100 of the environment.
/** @param {import('../types').Ctx} ctx */
async function declinedList(ctx) {
  const page = await get(`${ctx.base}/declined_charges${query({ limit: 100 })}`);
  return h('div', null,
    pageHead('Payments'),
    statusFilter(ctx, statuses, 'declined'),
    h('p', { class: 'hint' }, 'A declined charge creates no payment: the buyer can try again on the same checkout session. These are the latest declines, newest first.'),
    table(declineColumns(), page.data, 'No declined charges.', 'Declined charges'),
    page.has_more ? h('p', { class: 'hint' }, 'Only the latest 100 declines are shown.') : null);
}

// recentDeclines is the short list under the payments: the latest declines, with a link to all.
/** @param {import('../types').Ctx} ctx */
async function recentDeclines(ctx) {
  const page = await get(`${ctx.base}/declined_charges${query({ limit: 5 })}`);
  if (!page.data.length) return null;
  return h('section', { 'aria-labelledby': 'declines-title', id: 'recent-declines' },
    h('h2', { id: 'declines-title' }, 'Recent declined charges'),
    table(declineColumns(), page.data, 'No declined charges.', 'Recent declined charges'),
    h('p', null, h('a', { href: ctx.href({ status: 'declined', starting_after: null, ending_before: null }) }, 'All declined charges →')));
}

/** @param {import('../types').Ctx} ctx */
export async function list(ctx) {
  ctx.title('Payments');
  const status = ctx.query.get('status') || '';
  if (status === 'declined') return declinedList(ctx);
  const after = ctx.query.get('starting_after') || '';
  const before = ctx.query.get('ending_before') || '';
  const [page, declines] = await Promise.all([
    get(`${ctx.base}/payments${query({ status, limit: 20, starting_after: after, ending_before: before })}`),
    status || after || before ? null : recentDeclines(ctx),
  ]);
  return h('div', null,
    pageHead('Payments'),
    statusFilter(ctx, statuses, status),
    table(paymentColumns(ctx.base), page.data,
      status ? `No ${status.replaceAll('_', ' ')} payments.` : 'No payments yet.', 'Payments'),
    pager(ctx, page),
    declines);
}

/** @param {import('../types').Ctx} ctx */
export async function detail(ctx) {
  ctx.title(ctx.id);
  const back = h('a', { href: `${ctx.base}/payments` }, 'Back to payments');
  let d;
  try {
    d = await get(`${ctx.base}/payments/${encodeURIComponent(ctx.id)}`);
  } catch (err) {
    return missing(err, 'Payment', back);
  }
  const p = d.payment;
  ctx.title(`Payment ${money(p.amount, p.currency)}`);
  const f = d.fee_breakdown;
  const chargeCur = (f && f.charge_currency) || p.currency;
  let declines = { data: [] };
  if (p.session_id) {
    declines = await get(`${ctx.base}/declined_charges${query({ session: p.session_id, limit: 100 })}`);
  }
  return h('div', null,
    h('p', { class: 'breadcrumb' }, h('a', { href: `${ctx.base}/payments` }, 'Payments'), ' / ', h('span', { class: 'mono' }, p.id)),
    pageHead(`${money(p.amount, p.currency)}`, badge(p.status)),
    h('section', { class: 'panel', 'aria-labelledby': 'pay-facts' },
      h('h2', { id: 'pay-facts' }, 'Payment'),
      facts([
        ['ID', h('span', { class: 'mono' }, p.id)],
        ['Amount', money(p.amount, p.currency)],
        ['Refunded', p.amount_refunded ? money(p.amount_refunded, p.currency) : null],
        ['Status', badge(p.status)],
        ['Method', paymentMethod(p)],
        ['Card', p.card ? `${p.card.funding || ''} · issued in ${p.card.country || '?'}` : null],
        ['Customer', p.customer ? `${p.customer.name} <${p.customer.email}>` : null],
        ['Reference', p.reference],
        ['Checkout session', p.session_id ? h('span', { class: 'mono' }, p.session_id) : null],
        ['Invoice', p.invoice_id ? h('span', { class: 'mono' }, p.invoice_id) : null],
        ['Created', when(p.created, '—', true)],
        ...Object.entries(p.metadata || {}).map(([k, v]) => [`metadata.${k}`, v]),
      ])),
    // A failed payment moved no money: no fee, no net amount (the API sends no breakdown).
    f ? h('section', { class: 'panel', 'aria-labelledby': 'pay-fees', id: 'fee-breakdown' },
      h('h2', { id: 'pay-fees' }, 'Fee breakdown'),
      facts([
        ['Kassa fee', money(f.service_eur, 'EUR')],
        ['Processor fee', money(f.psp_eur, 'EUR')],
        ['Total fee', money(f.total_eur, 'EUR')],
        [`Total fee in ${chargeCur}`, money(f.service_charge_currency, chargeCur)],
        ['Exchange rate', chargeCur === 'EUR' ? null : `1 EUR = ${f.rate} ${chargeCur}`],
        ['Rate date', chargeCur === 'EUR' ? null : f.rate_date],
        ['Net amount', money(f.net_amount, chargeCur)],
      ]))
      : h('p', { class: 'notice', id: 'no-fee', role: 'note' }, 'This payment failed: no money moved, so no fee was charged and there is no net amount.'),
    d.dispute ? disputePanel(ctx, d.dispute) : null,
    refundForm(ctx, p),
    h('section', { 'aria-labelledby': 'pay-refunds', id: 'payment-refunds' },
      h('h2', { id: 'pay-refunds' }, 'Refunds'),
      refundsTable(d.refunds || [], chargeCur)),
    h('section', { 'aria-labelledby': 'pay-ledger', id: 'payment-ledger' },
      h('h2', { id: 'pay-ledger' }, 'Ledger entries'),
      table(transactionColumns(ctx.base), d.balance_transactions || [], 'No ledger entries: this payment moved no money yet.', 'Ledger entries')),
    declines.data.length ? h('section', { 'aria-labelledby': 'pay-declines', id: 'session-declines' },
      h('h2', { id: 'pay-declines' }, 'Declined tries on this checkout session'),
      table(declineColumns(), declines.data, 'No declined charges.', 'Declined tries')) : null,
    h('section', { 'aria-labelledby': 'pay-events', id: 'payment-events' },
      h('h2', { id: 'pay-events' }, 'Events'),
      eventsTable(d.events || [])));
}

// eventsTable lists events with their payload one click away.
export function eventsTable(events) {
  return table([
    { label: 'Event', cell: (e) => h('span', { class: 'mono' }, e.type) },
    { label: 'ID', cell: (e) => h('span', { class: 'mono' }, e.id) },
    { label: 'Time', cell: (e) => when(e.created, '—', true) },
    { label: 'Payload', cell: (e) => h('details', null, h('summary', null, 'Show JSON'), h('pre', null, JSON.stringify(e, null, 2))) },
  ], events, 'No events.', 'Events');
}

// refundForm is the refund form (pages/refund_form.js) when the payment can still be refunded.
/**
 * @param {import('../types').Ctx} ctx
 * @param {import('../types').Payment} p
 */
function refundForm(ctx, p) {
  const left = p.amount - (p.amount_refunded || 0);
  if ((p.status !== 'succeeded' && p.status !== 'partially_refunded') || left <= 0) return null;
  const section = h('section', { class: 'panel', id: 'refund' });
  render(html`<${RefundForm} ctx=${ctx} payment=${p} left=${left} />`, section);
  return section;
}

// refundsTable lists a payment's refunds with the part of the fee each gave back (in the
// charge currency, and the EUR parts with the processor's share). The refund's id is the
// row's data-id and the amount's title.
function refundsTable(refunds, chargeCur) {
  return table([
    { label: 'Amount', num: true, cell: (r) => h('span', { title: r.id }, money(r.amount, r.currency)) },
    { label: 'Reason', cell: (r) => r.reason.replaceAll('_', ' ') },
    { label: 'Status', cell: (r) => badge(r.status) },
    {
      label: 'Fee reversed',
      num: true,
      cell: (r) => `${money(r.fee_reversed.service_fee_charge_currency, chargeCur)}${chargeCur === 'EUR' ? ''
        : ` (${money(r.fee_reversed.service_fee_eur, 'EUR')})`}, processor ${money(r.fee_reversed.psp_fee_eur, 'EUR')}`,
    },
    { label: 'Date', cell: (r) => when(r.created, '—') },
  ], refunds, 'No refunds.', 'Refunds');
}
