// @ts-check
// Refunds: the environment's refunds, newest first, each linked to its payment, with cursor
// paging. Refunds are made on a payment's page.
import { get, query } from '../api.js';
import { h } from '../dom.js';
import { badge, money, when } from '../format.js';
import { pager, table } from '../ui.js';
import { pageHead } from './common.js';

/** @param {import('../types').Ctx} ctx */
export async function list(ctx) {
  ctx.title('Refunds');
  const after = ctx.query.get('starting_after') || '';
  const before = ctx.query.get('ending_before') || '';
  const page = await get(`${ctx.base}/refunds${query({ limit: 20, starting_after: after, ending_before: before })}`);
  const columns = [
    { label: 'Amount', num: true, cell: (r) => money(r.amount, r.currency) },
    { label: 'Status', cell: (r) => badge(r.status) },
    { label: 'Reason', cell: (r) => r.reason.replaceAll('_', ' ') },
    { label: 'Fee reversed', num: true, cell: (r) => money(r.fee_reversed.service_fee_charge_currency, r.currency) },
    { label: 'Payment', cell: (r) => h('a', { href: `${ctx.base}/payments/${encodeURIComponent(r.payment)}`, class: 'mono', 'data-payment': r.payment }, r.payment) },
    { label: 'Date', cell: (r) => when(r.created) },
  ];
  return h('div', null,
    pageHead('Refunds'),
    h('p', { class: 'hint' }, 'Refund a payment from its page. The fee is given back in proportion to the amount refunded.'),
    table(columns, page.data, 'No refunds yet.', 'Refunds'),
    pager(ctx, page));
}
