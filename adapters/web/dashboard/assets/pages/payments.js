// Payments: the list with a status filter and cursor paging, and one payment with its fee
// breakdown and events.
import { get, query } from '../api.js';
import { h } from '../dom.js';
import { badge, money, when } from '../format.js';
import { facts, field, pager, table } from '../ui.js';
import { missing, pageHead, paymentColumns, paymentMethod } from './common.js';

const statuses = ['succeeded', 'processing', 'failed', 'refunded', 'partially_refunded', 'disputed'];

// statusFilter is a GET form: changing it loads the first page of that status.
export function statusFilter(ctx, values, current) {
  const select = h('select', { name: 'status' },
    h('option', { value: '' }, 'All'),
    values.map((v) => h('option', { value: v, selected: v === current }, v.replaceAll('_', ' '))));
  const form = h('form', { class: 'toolbar', role: 'search', 'aria-label': 'Filter' },
    field({ label: 'Status', name: 'status', control: select }),
    h('button', { type: 'submit', class: 'button' }, 'Filter'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    ctx.navigate(ctx.href({ status: select.value, starting_after: null, ending_before: null }));
  });
  select.addEventListener('change', () => form.requestSubmit());
  return form;
}

export async function list(ctx) {
  ctx.title('Payments');
  const status = ctx.query.get('status') || '';
  const after = ctx.query.get('starting_after') || '';
  const before = ctx.query.get('ending_before') || '';
  const page = await get(`${ctx.base}/payments${query({ status, limit: 20, starting_after: after, ending_before: before })}`);
  return h('div', null,
    pageHead('Payments'),
    statusFilter(ctx, statuses, status),
    table(paymentColumns(ctx.base), page.data,
      status ? `No ${status.replaceAll('_', ' ')} payments.` : 'No payments yet.', 'Payments'),
    pager(ctx, page));
}

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
  const f = d.fee_breakdown || {};
  const chargeCur = f.charge_currency || p.currency;
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
    h('section', { class: 'panel', 'aria-labelledby': 'pay-fees', id: 'fee-breakdown' },
      h('h2', { id: 'pay-fees' }, 'Fee breakdown'),
      facts([
        ['Kassa fee', money(f.service_eur, 'EUR')],
        ['Processor fee', money(f.psp_eur, 'EUR')],
        ['Total fee', money(f.total_eur, 'EUR')],
        [`Total fee in ${chargeCur}`, money(f.service_charge_currency, chargeCur)],
        ['Exchange rate', chargeCur === 'EUR' ? null : `1 EUR = ${f.rate} ${chargeCur}`],
        ['Rate date', chargeCur === 'EUR' ? null : f.rate_date],
        ['Net amount', money(f.net_amount, chargeCur)],
      ])),
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
