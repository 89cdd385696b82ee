// @ts-check
// Payouts: the daily payouts, newest first, and one payout with the balance transactions it
// settles (their nets sum to its amount) and a CSV download of them.
import { get, query } from '../api.js';
import { h } from '../dom.js';
import { badge, money, when } from '../format.js';
import { facts, pager, table } from '../ui.js';
import { missing, pageHead } from './common.js';
import { transactionColumns } from './balance.js';

/** @param {import('../types').Ctx} ctx */
export async function list(ctx) {
  ctx.title('Payouts');
  const after = ctx.query.get('starting_after') || '';
  const before = ctx.query.get('ending_before') || '';
  const [page, bal] = await Promise.all([
    get(`${ctx.base}/payouts${query({ limit: 20, starting_after: after, ending_before: before })}`),
    get(`${ctx.base}/balance`),
  ]);
  const columns = [
    { label: 'Amount', num: true, cell: (p) => h('a', { href: `${ctx.base}/payouts/${encodeURIComponent(p.id)}`, 'data-payout': p.id }, money(p.amount, p.currency)) },
    { label: 'Status', cell: (p) => badge(p.status) },
    { label: 'Payout day', cell: (p) => when(p.created) },
    { label: 'Arrival', cell: (p) => when(p.arrival_date) },
    { label: 'ID', cell: (p) => h('span', { class: 'mono' }, p.id) },
  ];
  return h('div', null,
    pageHead('Payouts'),
    bal.payouts.enabled
      ? h('p', { class: 'hint' }, 'Every day at 00:00 UTC the whole available balance of each currency goes out; it arrives two days later.')
      : h('p', { class: 'notice', id: 'payouts-off', role: 'note' }, bal.payouts.message),
    table(columns, page.data, 'No payouts yet.', 'Payouts'),
    pager(ctx, page));
}

/** @param {import('../types').Ctx} ctx */
export async function detail(ctx) {
  ctx.title(ctx.id);
  const back = h('a', { href: `${ctx.base}/payouts` }, 'Back to payouts');
  let d;
  try {
    d = await get(`${ctx.base}/payouts/${encodeURIComponent(ctx.id)}`);
  } catch (err) {
    return missing(err, 'Payout', back);
  }
  const p = d.payout;
  ctx.title(`Payout ${money(p.amount, p.currency)}`);
  const csv = `/api/v1${ctx.base}/balance_transactions/export${query({ payout: p.id })}`;
  return h('div', null,
    h('p', { class: 'breadcrumb' }, h('a', { href: `${ctx.base}/payouts` }, 'Payouts'), ' / ', h('span', { class: 'mono' }, p.id)),
    pageHead(money(p.amount, p.currency), badge(p.status)),
    h('section', { class: 'panel', 'aria-labelledby': 'po-facts' },
      h('h2', { id: 'po-facts' }, 'Payout'),
      facts([
        ['ID', h('span', { class: 'mono' }, p.id)],
        ['Amount', money(p.amount, p.currency)],
        ['Status', badge(p.status)],
        ['Payout day', when(p.created, '—', true)],
        ['Arrival', when(p.arrival_date, '—', true)],
        ['Balance transaction', h('span', { class: 'mono' }, p.balance_transaction)],
      ])),
    h('section', { 'aria-labelledby': 'po-txns', id: 'payout-transactions' },
      h('h2', { id: 'po-txns' }, 'Transactions it settles'),
      h('p', null, h('a', { href: csv, class: 'button', id: 'payout-csv', download: `${p.id}.csv` }, 'Download CSV')),
      table(transactionColumns(ctx.base), d.balance_transactions, 'No transactions.', 'Settled transactions'),
      d.has_more_transactions ? h('p', { class: 'hint' }, 'Only the latest 100 are shown; the CSV has all of them.') : null));
}
