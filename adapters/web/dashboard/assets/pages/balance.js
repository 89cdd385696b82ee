// @ts-check
// Balance: available and pending per currency, when the next payout runs, and every balance
// transaction (the ledger), filtered by type, source object or payment, with cursor paging and
// a CSV download of the same selection.
import { get, query } from '../api.js';
import { h } from '../dom.js';
import { badge, money, when } from '../format.js';
import { field, pager, table } from '../ui.js';
import { pageHead } from './common.js';

export const types = ['payment', 'fee', 'refund', 'fee_reversal', 'dispute', 'dispute_fee', 'dispute_reversal', 'payout'];

// sourceLink links a transaction's source to the page that shows it: a payout's page, or the
// page of the payment a payment, refund or dispute belongs to.
export function sourceLink(base, t) {
  if (t.source.startsWith('po_')) return h('a', { href: `${base}/payouts/${encodeURIComponent(t.source)}`, class: 'mono' }, t.source);
  if (t.payment) return h('a', { href: `${base}/payments/${encodeURIComponent(t.payment)}`, class: 'mono' }, t.source);
  return h('span', { class: 'mono' }, t.source);
}

// transactionColumns are the columns of a balance transactions table.
export function transactionColumns(base) {
  return [
    { label: 'Type', cell: (t) => t.type.replaceAll('_', ' ') },
    { label: 'Amount', num: true, cell: (t) => money(t.amount, t.currency) },
    { label: 'Fee', num: true, cell: (t) => money(t.fee, t.currency) },
    { label: 'Net', num: true, cell: (t) => money(t.net, t.currency) },
    { label: 'Status', cell: (t) => badge(t.status) },
    { label: 'Available on', cell: (t) => when(t.available_on) },
    { label: 'Source', cell: (t) => sourceLink(base, t) },
    { label: 'Created', cell: (t) => when(t.created, '—', true) },
  ];
}

// filters is a GET form over the list: type, source object and payment. Nothing happens until
// Filter is pressed, so keyboard users can move through the options.
/** @param {import('../types').Ctx} ctx @param {any} current */
function filters(ctx, current) {
  const select = h('select', { name: 'type' },
    h('option', { value: '' }, 'All'),
    types.map((v) => h('option', { value: v, selected: v === current.type }, v.replaceAll('_', ' '))));
  const form = h('form', { class: 'toolbar', role: 'search', 'aria-label': 'Filter balance transactions' },
    field({ label: 'Type', name: 'type', control: select }),
    field({ label: 'Source', name: 'source', value: current.source, attrs: { autocomplete: 'off', spellcheck: 'false', placeholder: 'py_, re_, dp_ or po_' } }),
    field({ label: 'Payment', name: 'payment', value: current.payment, attrs: { autocomplete: 'off', spellcheck: 'false', placeholder: 'py_…' } }),
    h('button', { type: 'submit', class: 'button' }, 'Filter'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    ctx.navigate(ctx.href({ type: select.value, source: form.elements.source.value.trim(), payment: form.elements.payment.value.trim(),
      starting_after: null, ending_before: null }));
  });
  return form;
}

function payoutLine(p) {
  if (!p.enabled) return h('p', { class: 'notice', id: 'payouts-off', role: 'note' }, p.message || 'Payouts do not run in this environment.');
  return h('p', { class: 'hint', id: 'next-payout' }, 'Daily payouts take the whole available balance of each currency. Next payout: ',
    when(p.next_payout_at, '—', true), '.');
}

/** @param {import('../types').Ctx} ctx */
export async function list(ctx) {
  ctx.title('Balance');
  const current = {
    type: ctx.query.get('type') || '', source: ctx.query.get('source') || '', payment: ctx.query.get('payment') || '',
    payout: ctx.query.get('payout') || '',
  };
  const after = ctx.query.get('starting_after') || '';
  const before = ctx.query.get('ending_before') || '';
  const [bal, page] = await Promise.all([
    get(`${ctx.base}/balance`),
    get(`${ctx.base}/balance_transactions${query({ ...current, limit: 20, starting_after: after, ending_before: before })}`),
  ]);
  const rows = bal.available.map((a, i) => ({ id: a.currency, currency: a.currency, available: a.amount, pending: bal.pending[i].amount }));
  const csv = `/api/v1${ctx.base}/balance_transactions/export${query(current)}`;
  return h('div', null,
    pageHead('Balance'),
    h('section', { class: 'panel', 'aria-labelledby': 'bal-now', id: 'balance-now' },
      h('h2', { id: 'bal-now' }, 'Balance'),
      table([
        { label: 'Currency', cell: (r) => r.currency },
        { label: 'Available', num: true, cell: (r) => money(r.available, r.currency) },
        { label: 'Pending', num: true, cell: (r) => money(r.pending, r.currency) },
      ], rows, 'No balance yet: it starts with the first payment.', 'Balance per currency'),
      h('p', { class: 'hint' }, 'Card funds are pending for two days after the charge, SEPA funds for two days after settlement. Refunds and disputes are taken from the available balance at once.'),
      payoutLine(bal.payouts)),
    h('section', { 'aria-labelledby': 'bal-txns', id: 'balance-transactions' },
      h('h2', { id: 'bal-txns' }, 'Balance transactions'),
      filters(ctx, current),
      current.payout ? h('p', { class: 'hint' }, 'Settled by payout ', h('span', { class: 'mono' }, current.payout), '.') : null,
      h('p', null, h('a', { href: csv, class: 'button', id: 'balance-csv', download: 'balance_transactions.csv' }, 'Download CSV')),
      table(transactionColumns(ctx.base), page.data, 'No balance transactions.', 'Balance transactions'),
      pager(ctx, page)));
}
