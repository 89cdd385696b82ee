// @ts-check
// Pieces several pages share: payment rows, the list-page frame.
import { h } from '../dom.js';
import { badge, money, when } from '../format.js';
import { field } from '../ui.js';

// filterForm is a list page's filter: a GET form of one select whose Filter button (or
// Enter) loads the first page of the chosen value under query parameter name. Choosing an
// option does nothing by itself, so keyboard users can arrow through the options without
// loading another page (WCAG 3.2.2 On Input). values are words (shown with "_" as spaces) or
// [value, label] pairs; "All" (the empty value) comes first.
/**
 * @param {import('../types').Ctx} ctx
 * @param {{name: string, label: string, values: Array<string | string[]>, current: string}} o
 */
export function filterForm(ctx, { name, label, values, current }) {
  const select = h('select', { name },
    h('option', { value: '' }, 'All'),
    values.map((v) => {
      const [value, text] = Array.isArray(v) ? v : [v, v.replaceAll('_', ' ')];
      return h('option', { value, selected: value === current }, text);
    }));
  const form = h('form', { class: 'toolbar', role: 'search', 'aria-label': 'Filter' },
    field({ label, name, control: select }),
    h('button', { type: 'submit', class: 'button' }, 'Filter'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    ctx.navigate(ctx.href({ [name]: select.value, starting_after: null, ending_before: null }));
  });
  return form;
}

// statusFilter is the filter of a list by status.
/**
 * @param {import('../types').Ctx} ctx
 * @param {Array<string | string[]>} values
 * @param {string} current
 */
export function statusFilter(ctx, values, current) {
  return filterForm(ctx, { name: 'status', label: 'Status', values, current });
}

// paymentMethod renders "Visa •••• 4242" or "SEPA debit".
export function paymentMethod(p) {
  if (p.payment_method === 'card' && p.card) {
    const brand = p.card.brand ? p.card.brand.charAt(0).toUpperCase() + p.card.brand.slice(1) : 'Card';
    return `${brand} •••• ${p.card.last4}`;
  }
  if (p.payment_method === 'sepa_debit') return 'SEPA debit';
  return p.payment_method || '—';
}

// paymentColumns are the columns of a payments table; base is "/test" or "/live".
export function paymentColumns(base) {
  return [
    { label: 'Amount', num: true, cell: (p) => h('a', { href: `${base}/payments/${p.id}`, 'data-payment': p.id }, money(p.amount, p.currency)) },
    { label: 'Status', cell: (p) => badge(p.status) },
    { label: 'Method', cell: (p) => paymentMethod(p) },
    { label: 'Customer', cell: (p) => (p.customer ? p.customer.email || p.customer.name : '—') },
    { label: 'Reference', cell: (p) => p.reference || '—' },
    { label: 'Date', cell: (p) => when(p.created) },
  ];
}

// pageHead renders the title row with optional actions.
export function pageHead(title, ...actions) {
  return h('div', { class: 'page-head' }, h('h1', null, title),
    actions.length ? h('div', { class: 'actions' }, actions) : null);
}

// notFoundOr404 turns a 404 from the API into a "not found" view, rethrowing anything else.
export function missing(err, what, back) {
  if (err && err.status === 404) {
    return h('div', null, h('h1', null, `${what} not found`),
      h('p', null, `There is no ${what.toLowerCase()} with this id in this environment. `, back));
  }
  throw err;
}
