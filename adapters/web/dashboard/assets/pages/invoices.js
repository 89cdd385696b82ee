// @ts-check
// Invoices: the list with a status filter and a new-draft form; per invoice, the draft editor
// (pages/invoice_editor.js: free-form and catalog lines, VAT per line, live totals, save, send,
// delete) or, once sent, its facts with the hosted link, void and mark uncollectible. The
// server decides everything.
import { get, post, query } from '../api.js';
import { h } from '../dom.js';
import { badge, currencies, money, when } from '../format.js';
import { busy, confirmAction, errorText, facts, field, flash, notice, pager, showFormError, table } from '../ui.js';
import { html, render } from '../preact.js';
import { InvoiceEditor } from './invoice_editor.js';
import { missing, pageHead, statusFilter } from './common.js';

const statuses = ['draft', 'open', 'paid', 'void', 'uncollectible'];

/** @param {import('../types').Ctx} ctx */
export async function list(ctx) {
  ctx.title('Invoices');
  const status = ctx.query.get('status') || '';
  const page = await get(`${ctx.base}/invoices${query({ status, limit: 20, starting_after: ctx.query.get('starting_after') || '', ending_before: ctx.query.get('ending_before') || '' })}`);

  const currency = h('select', { name: 'currency' }, currencies.map((c) => h('option', { value: c, selected: c === 'EUR' }, c)));
  const form = h('form', { class: 'stack', id: 'create-invoice', novalidate: true },
    field({ label: 'Customer name', name: 'customer_name', required: true, attrs: { maxlength: 120, autocomplete: 'off' } }),
    field({ label: 'Customer e-mail', name: 'customer_email', type: 'email', required: true, attrs: { autocomplete: 'off' } }),
    field({ label: 'Currency', name: 'currency', control: currency }),
    h('div', null, h('button', { type: 'submit', class: 'button button-primary' }, 'Create draft')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = { customer_name: form.elements.customer_name.value.trim(), customer_email: form.elements.customer_email.value.trim(), currency: currency.value };
    await busy(form, async () => {
      try {
        const inv = await post(`${ctx.base}/invoices`, body);
        ctx.navigate(`${ctx.base}/invoices/${inv.id}`);
      } catch (err) {
        showFormError(form, err, 'customer_name');
      }
    });
  });

  return h('div', null,
    pageHead('Invoices'),
    statusFilter(ctx, statuses, status),
    table([
      { label: 'Number', cell: (i) => h('a', { href: `${ctx.base}/invoices/${i.id}`, 'data-invoice': i.id }, i.number || 'Draft') },
      { label: 'Customer', cell: (i) => i.customer_name },
      { label: 'Total', num: true, cell: (i) => money(i.total_amount, i.currency) },
      { label: 'Status', cell: (i) => badge(i.status) },
      { label: 'Due', cell: (i) => when(i.due_date) },
      { label: 'Created', cell: (i) => when(i.created) },
    ], page.data, status ? `No ${status} invoices.` : 'No invoices yet.', 'Invoices'),
    pager(ctx, page),
    h('section', { class: 'panel', 'aria-labelledby': 'new-invoice' }, h('h2', { id: 'new-invoice' }, 'New invoice'), form));
}

/** @param {import('../types').Ctx} ctx */
export async function detail(ctx) {
  ctx.title('Invoice');
  const back = h('a', { href: `${ctx.base}/invoices` }, 'Back to the invoices');
  const path = /** @type {const} */ (`${ctx.base}/invoices/${encodeURIComponent(ctx.id)}`);
  let inv;
  try {
    inv = await get(path);
  } catch (err) {
    return missing(err, 'Invoice', back);
  }
  ctx.title(inv.number ? `Invoice ${inv.number}` : 'Draft invoice');
  return inv.status === 'draft' ? editor(ctx, inv, path, back) : sent(ctx, inv, path, back);
}

/**
 * @param {import('../types').Ctx} ctx
 * @param {import('../types').Invoice} inv
 * @param {`/${string}/invoices/${string}`} path
 * @param {Node} back
 */
function sent(ctx, inv, path, back) {
  const act = (label, action, question, body, danger) => h('button', {
    type: 'button', class: danger ? 'button button-danger' : 'button', [`data-${action}`]: '',
    onclick: async (ev) => {
      if (!(await confirmAction({ title: question, body, confirm: label, danger }))) return;
      ev.target.disabled = true;
      try {
        await post(`${path}/${action}`);
        await ctx.reload();
        flash('ok', `Invoice ${inv.number}: ${label.toLowerCase()} done.`);
      } catch (err) {
        ev.target.disabled = false;
        flash('error', errorText(err));
      }
    },
  }, label);
  const actions = [];
  if (inv.hosted_invoice_url) {
    actions.push(h('button', {
      type: 'button', class: 'button', 'data-copy-link': '',
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(inv.hosted_invoice_url);
          flash('ok', 'Link copied.');
        } catch {
          flash('error', 'Copying failed; select the link and copy it.');
        }
      },
    }, 'Copy link'));
  }
  actions.push(h('a', { class: 'button', href: `/api/v1${path}/pdf`, download: `${inv.number}.pdf`, 'data-pdf': '' }, 'PDF'));
  if (inv.status === 'open') actions.push(act('Mark uncollectible', 'mark_uncollectible', 'Mark this invoice uncollectible?', 'It can still be paid or voided afterwards.'));
  if (inv.status === 'open' || inv.status === 'uncollectible') actions.push(act('Void', 'void', 'Void this invoice?', 'The customer can no longer pay it. This cannot be undone.', true));
  return h('div', null,
    back,
    pageHead(`Invoice ${inv.number}`, ...actions),
    facts([
      ['Status', badge(inv.status)],
      ['Customer', `${inv.customer_name} <${inv.customer_email}>`],
      ['Issued', when(inv.issue_date)],
      ['Due', when(inv.due_date)],
      ['Total', money(inv.total_amount, inv.currency)],
      // What the customer's balance did (credit taken is negative), when the invoice met one.
      ['Applied balance', inv.starting_balance || inv.ending_balance
        ? h('span', { 'data-applied-balance': '' }, money(inv.starting_balance - inv.ending_balance, inv.currency)) : null],
      ['Amount due', money(inv.amount_due, inv.currency)],
      ['Amount paid', money(inv.amount_paid, inv.currency)],
      ['Payment', inv.payment_id ? h('a', { href: `${ctx.base}/payments/${inv.payment_id}` }, inv.payment_id) : null],
      ['Subscription', inv.subscription],
      ['Payment attempts', inv.attempt_count ? String(inv.attempt_count) : null],
      ['Dunning stage', inv.dunning_stage ? badge(inv.dunning_stage) : null],
      ['Next payment attempt', inv.next_payment_attempt ? when(inv.next_payment_attempt) : null],
      ['Hosted page', inv.hosted_invoice_url ? h('a', { href: inv.hosted_invoice_url, 'data-hosted': '', rel: 'noopener', target: '_blank' }, inv.hosted_invoice_url) : null],
    ]),
    linesTable(inv));
}

function linesTable(inv) {
  return table([
    { label: 'Description', cell: (l) => l.description },
    { label: 'Qty', num: true, cell: (l) => String(l.quantity) },
    { label: 'Unit price', num: true, cell: (l) => money(l.unit_amount, inv.currency) },
    { label: 'VAT', num: true, cell: (l) => `${l.vat_rate}%` },
    { label: 'Amount', num: true, cell: (l) => money(l.amount, inv.currency) },
  ], inv.line_items, 'No lines.', 'Lines');
}

/**
 * editor is the draft editor (pages/invoice_editor.js) with the catalog's active one-time prices.
 * @param {import('../types').Ctx} ctx
 * @param {import('../types').Invoice} inv
 * @param {`/${string}/invoices/${string}`} path
 * @param {Node} back
 */
async function editor(ctx, inv, path, back) {
  /** @type {import('./invoice_editor.js').CatalogPrice[]} */
  let prices = [];
  try {
    const ps = await get(`${ctx.base}/products${query({ active: 'true', limit: 100 })}`);
    for (const p of ps.data) {
      for (const pr of p.prices || []) {
        if (pr.active && !pr.recurring) prices.push({ id: pr.id, label: `${p.name} — ${money(pr.unit_amount, pr.currency)}`, unit: pr.unit_amount, currency: pr.currency, name: p.name });
      }
    }
  } catch {
    prices = [];
  }
  const panel = h('section', { class: 'panel', 'aria-label': 'Editor' });
  render(html`<${InvoiceEditor} ctx=${ctx} inv=${inv} path=${path} prices=${prices} />`, panel);
  return h('div', null,
    back,
    pageHead('Draft invoice'),
    facts([['Customer', `${inv.customer_name} <${inv.customer_email}>`], ['Currency', inv.currency], ['Status', badge('draft')]]),
    notice('', 'Lines from the catalog keep their price; VAT is worked out per line and rounded to the cent.'),
    panel);
}
