// @ts-check
// Customers: the list with an e-mail search (applied by its Search button only) and, per
// customer, its subscriptions, saved payment methods (brand, last four and expiry), invoices
// and payments, its balance with the transactions that made it and a form to adjust it
// (pages/customer_balance.js). The server decides everything.
import { get, query } from '../api.js';
import { h } from '../dom.js';
import { badge, money, when } from '../format.js';
import { html, render } from '../preact.js';
import { facts, field, pager, table } from '../ui.js';
import { BalanceForm } from './customer_balance.js';
import { missing, pageHead, paymentColumns } from './common.js';
import { subscriptionColumns } from './subscriptions.js';

/** @param {import('../types').Ctx} ctx */
function emailSearch(ctx, current) {
  const input = h('input', { type: 'search', name: 'email', value: current, autocomplete: 'off', maxlength: 254 });
  const form = h('form', { class: 'toolbar', role: 'search', 'aria-label': 'Find a customer' },
    field({ label: 'E-mail', name: 'email', control: input }),
    h('button', { type: 'submit', class: 'button' }, 'Search'),
    current ? h('a', { class: 'button', href: ctx.href({ email: null, starting_after: null, ending_before: null }) }, 'Show all') : null);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    ctx.navigate(ctx.href({ email: input.value.trim(), starting_after: null, ending_before: null }));
  });
  return form;
}

/** @param {import('../types').Ctx} ctx */
export async function list(ctx) {
  ctx.title('Customers');
  const email = ctx.query.get('email') || '';
  const page = await get(`${ctx.base}/customers${query({ email, limit: 20, starting_after: ctx.query.get('starting_after') || '', ending_before: ctx.query.get('ending_before') || '' })}`);
  return h('div', null,
    pageHead('Customers'),
    emailSearch(ctx, email),
    table([
      { label: 'Name', cell: (c) => h('a', { href: `${ctx.base}/customers/${c.id}`, 'data-customer': c.id }, c.name) },
      { label: 'E-mail', cell: (c) => c.email },
      { label: 'Created', cell: (c) => when(c.created) },
    ], page.data, email ? `No customer with the e-mail address ${email}.` : 'No customers yet. A customer is created with its first subscription.', 'Customers'),
    pager(ctx, page));
}

/** methodText renders "Visa •••• 4242, expires 12/2030" or "SEPA debit •••• 3000". */
export function methodText(m) {
  if (!m) return '—';
  if (m.type === 'sepa_debit') return `SEPA debit •••• ${m.last4}`;
  const brand = m.brand ? m.brand.charAt(0).toUpperCase() + m.brand.slice(1) : 'Card';
  return `${brand} •••• ${m.last4}, expires ${String(m.exp_month).padStart(2, '0')}/${m.exp_year}`;
}

/**
 * The customer's balance per currency: a credit (negative) the next invoices take, or an amount
 * owed (positive) they add.
 * @param {Record<string, number>} balances
 */
function balanceText(balances) {
  const parts = Object.keys(balances).sort().filter((cur) => balances[cur] !== 0)
    .map((cur) => balances[cur] < 0 ? `${money(-balances[cur], cur)} credit` : `${money(balances[cur], cur)} owed`);
  return h('span', { 'data-balance': '' }, parts.length ? parts.join(', ') : 'None');
}

/** Why a customer's balance changed, in words. */
const balanceTypes = {
  adjustment: 'Adjustment',
  applied_to_invoice: 'Applied to an invoice',
  proration_credit: 'Credit of a plan change',
  proration_too_small: 'Plan change charge carried to the next invoice',
  proration_charge_at_cancel: 'Plan change charge of a canceled subscription',
};

/**
 * The customer's balance transactions, newest first, ten a page (the page's starting_after /
 * ending_before move through them).
 * @param {import('../types').Ctx} ctx @param {string} id
 */
async function balanceTransactions(ctx, id) {
  const page = await get(`${ctx.base}/customers/${encodeURIComponent(id)}/balance_transactions${query({ limit: 10, starting_after: ctx.query.get('starting_after') || '', ending_before: ctx.query.get('ending_before') || '' })}`);
  return h('div', { id: 'balance-transactions' },
    table([
      { label: 'Date', cell: (t) => when(t.created) },
      { label: 'Change', cell: (t) => balanceTypes[t.type] || t.type },
      { label: 'Amount', num: true, cell: (t) => (t.amount < 0 ? `${money(-t.amount, t.currency)} credit` : `${money(t.amount, t.currency)} owed`) },
      { label: 'Note', cell: (t) => t.description || '—' },
      { label: 'Invoice', cell: (t) => (t.invoice ? h('a', { href: `${ctx.base}/invoices/${t.invoice}`, 'data-invoice': t.invoice }, 'View invoice') : '—') },
    ], page.data, 'No balance changes yet.', 'Balance changes'),
    pager(ctx, page));
}

/** @param {import('../types').Ctx} ctx */
export async function detail(ctx) {
  ctx.title('Customer');
  const back = h('a', { href: `${ctx.base}/customers` }, 'Back to the customers');
  let d;
  try {
    d = await get(`${ctx.base}/customers/${encodeURIComponent(ctx.id || '')}`);
  } catch (err) {
    return missing(err, 'Customer', back);
  }
  const c = d.customer;
  ctx.title(`Customer ${c.name}`);
  const txns = await balanceTransactions(ctx, c.id);
  // The form's currency starts at the newest subscription's, else a currency the customer
  // has a balance in, else EUR.
  const currency = (d.subscriptions[0] && d.subscriptions[0].currency) || Object.keys(d.balances).sort()[0] || 'EUR';
  const panel = h('section', { class: 'panel', 'aria-labelledby': 'customer-adjust', id: 'customer-balance-panel' });
  render(html`<${BalanceForm} ctx=${ctx} customer=${c} currency=${currency} />`, panel);
  return h('div', null,
    back,
    pageHead(c.name),
    facts([['E-mail', c.email], ['Id', h('code', null, c.id)], ['Created', when(c.created)],
      ['Balance', balanceText(d.balances)]]),
    h('h2', null, 'Balance changes'),
    txns,
    panel,
    h('h2', null, 'Subscriptions'),
    table(subscriptionColumns(ctx.base), d.subscriptions, 'No subscriptions.', 'Subscriptions'),
    h('h2', null, 'Saved payment methods'),
    table([
      { label: 'Method', cell: (m) => methodText(m) },
      { label: 'Default', cell: (m) => (m.default ? 'Default for renewals' : '—') },
      { label: 'Saved', cell: (m) => when(m.created) },
    ], d.payment_methods, 'No saved payment methods.', 'Saved payment methods'),
    h('h2', null, 'Invoices'),
    table([
      { label: 'Number', cell: (i) => h('a', { href: `${ctx.base}/invoices/${i.id}`, 'data-invoice': i.id }, i.number || 'Draft') },
      { label: 'Total', num: true, cell: (i) => money(i.total_amount, i.currency) },
      { label: 'Status', cell: (i) => badge(i.status) },
      { label: 'Created', cell: (i) => when(i.created) },
    ], d.invoices, 'No invoices.', 'Invoices'),
    h('h2', null, 'Payments'),
    table(paymentColumns(ctx.base), d.payments, 'No payments.', 'Payments'));
}
