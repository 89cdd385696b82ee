// @ts-check
// Invoices: the list with a status filter and a new-draft form; per invoice, the draft editor
// (free-form and catalog lines, VAT per line, live totals, save, send, delete) or, once sent,
// its facts with the hosted link, void and mark uncollectible. The server decides everything;
// the live totals preview the same exact arithmetic (VAT per line, half-up, in minor units).
import { del, get, post, query } from '../api.js';
import { h } from '../dom.js';
import { badge, currencies, exponent, money, parseAmount, plain, when } from '../format.js';
import { busy, confirmAction, errorText, facts, field, flash, notice, pager, showFormError, table } from '../ui.js';
import { missing, pageHead } from './common.js';

const statuses = ['draft', 'open', 'paid', 'void', 'uncollectible'];

/** @param {import('../types').Ctx} ctx */
function statusFilter(ctx, current) {
  const select = h('select', { name: 'status' }, h('option', { value: '' }, 'All'),
    statuses.map((s) => h('option', { value: s, selected: current === s }, s)));
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
    statusFilter(ctx, status),
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

// vatOf is round half-up(quantity × unit × rate / 100) in minor units, rate a decimal string
// with at most two decimals: exact, in BigInt.
function vatOf(quantity, unit, rate) {
  const m = /^(\d{1,3})(?:\.(\d{1,2}))?$/.exec(rate || '0');
  if (!m) return null;
  const bp = BigInt(m[1]) * 100n + BigInt((m[2] || '').padEnd(2, '0') || '0');
  return Number((BigInt(quantity) * BigInt(unit) * bp + 5000n) / 10000n);
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
      ['Amount due', money(inv.amount_due, inv.currency)],
      ['Amount paid', money(inv.amount_paid, inv.currency)],
      ['Payment', inv.payment_id ? h('a', { href: `${ctx.base}/payments/${inv.payment_id}` }, inv.payment_id) : null],
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
 * @param {import('../types').Ctx} ctx
 * @param {import('../types').Invoice} inv
 * @param {`/${string}/invoices/${string}`} path
 * @param {Node} back
 */
async function editor(ctx, inv, path, back) {
  const cur = inv.currency;
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
  const rows = h('tbody', { id: 'lines' });
  const totals = {
    subtotal: h('output', { id: 'total-subtotal' }), vat: h('output', { id: 'total-vat' }), total: h('output', { id: 'total-total' }),
  };
  const status = h('p', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite', id: 'totals-status' });
  const lineCount = { n: 0 };

  function recompute() {
    let sub = 0; let vat = 0; let ok = true;
    for (const tr of rows.children) {
      const q = Number(tr.querySelector('[data-q]').value);
      const unitText = tr.dataset.price ? null : tr.querySelector('[data-unit]').value;
      const unit = tr.dataset.price ? Number(tr.dataset.unit) : parseAmount(unitText || '0', cur).minor;
      const rate = tr.querySelector('[data-rate]').value.trim() || '0';
      const v = Number.isInteger(q) && q >= 1 && Number.isSafeInteger(unit) ? vatOf(q, unit, rate) : null;
      const out = tr.querySelector('[data-amount]');
      if (v === null) { ok = false; out.textContent = '—'; continue; }
      out.textContent = money(q * unit, cur);
      sub += q * unit; vat += v;
    }
    totals.subtotal.textContent = ok ? money(sub, cur) : '—';
    totals.vat.textContent = ok ? money(vat, cur) : '—';
    totals.total.textContent = ok ? money(sub + vat, cur) : '—';
    status.textContent = ok ? `Total ${money(sub + vat, cur)}` : 'Check the lines: a quantity, price or VAT rate is not valid.';
  }

  function addLine(l) {
    lineCount.n += 1;
    const n = lineCount.n;
    const locked = !!(l && l.price_id);
    const cell = (label, input) => h('td', null, h('label', { class: 'visually-hidden', for: input.id }, `${label}, line ${n}`), input);
    const desc = h('input', { type: 'text', id: `line-${n}-description`, value: l ? l.description : '', maxlength: 500, 'data-desc': '', readonly: locked, autocomplete: 'off' });
    const qty = h('input', { type: 'text', id: `line-${n}-quantity`, value: l ? String(l.quantity) : '1', inputmode: 'numeric', size: 5, 'data-q': '' });
    const unit = h('input', { type: 'text', id: `line-${n}-unit`, value: l ? plain(l.unit_amount, exponent(cur)) : '', inputmode: 'decimal', size: 9, 'data-unit': '', readonly: locked });
    const rate = h('input', { type: 'text', id: `line-${n}-vat`, value: l ? l.vat_rate : '0', inputmode: 'decimal', size: 6, 'data-rate': '' });
    const tr = h('tr', { 'data-line': '', 'data-price': locked ? l.price_id : null, 'data-unit': locked ? String(l.unit_amount) : null },
      cell('Description', desc), cell('Quantity', qty), cell('Unit price', unit), cell('VAT %', rate),
      h('td', { class: 'num', 'data-amount': '' }),
      h('td', null, h('button', {
        type: 'button', class: 'button button-small', 'aria-label': `Remove line ${n}`,
        onclick: () => { tr.remove(); recompute(); form.querySelector('[data-add-line]').focus(); },
      }, 'Remove')));
    for (const i of [qty, unit, rate, desc]) i.addEventListener('input', recompute);
    rows.append(tr);
    recompute();
    return desc;
  }
  for (const l of inv.line_items) addLine(l);

  const picker = h('select', { id: 'catalog-price', disabled: !prices.length },
    h('option', { value: '' }, prices.length ? 'Choose a price…' : 'No one-time prices in the catalog'),
    prices.map((p) => h('option', { value: p.id, disabled: p.currency !== cur }, p.currency === cur ? p.label : `${p.label} (other currency)`)));
  const days = field({ label: 'Days until due', name: 'days_until_due', value: String(inv.days_until_due), attrs: { inputmode: 'numeric', size: 4 } });
  const memo = field({ label: 'Memo (optional)', name: 'memo', control: h('textarea', { rows: 2, maxlength: 5000 }, inv.memo || '') });
  const form = h('form', { class: 'stack', id: 'invoice-editor', novalidate: true },
    h('div', { class: 'table-wrap' }, h('table', { class: 'editor-lines' },
      h('caption', { class: 'visually-hidden' }, 'Lines'),
      h('thead', null, h('tr', null, ['Description', 'Qty', 'Unit price', 'VAT %', 'Amount', ''].map((c) => h('th', { scope: 'col' }, c)))),
      rows,
      h('tfoot', null,
        h('tr', null, h('th', { scope: 'row', colspan: 4 }, 'Subtotal'), h('td', { class: 'num' }, totals.subtotal), h('td')),
        h('tr', null, h('th', { scope: 'row', colspan: 4 }, 'VAT'), h('td', { class: 'num' }, totals.vat), h('td')),
        h('tr', null, h('th', { scope: 'row', colspan: 4 }, 'Total'), h('td', { class: 'num' }, totals.total), h('td'))))),
    status,
    h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'button', 'data-add-line': '', onclick: () => addLine(null).focus() }, 'Add a line'),
      h('label', { for: 'catalog-price' }, 'Add from the catalog'), picker),
    days, memo,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'button', 'data-save': '' }, 'Save draft'),
      h('button', { type: 'button', class: 'button button-primary', 'data-send': '' }, 'Send invoice'),
      h('button', { type: 'button', class: 'button button-danger', 'data-delete': '' }, 'Delete draft')));
  picker.addEventListener('change', () => {
    const p = prices.find((x) => x.id === picker.value);
    if (!p) return;
    addLine({ price_id: p.id, description: p.name, quantity: 1, unit_amount: p.unit, vat_rate: '0' });
    picker.value = '';
    rows.lastElementChild.querySelector('[data-q]').focus();
  });

  function body() {
    const lines = [];
    for (const tr of rows.children) {
      const l = { quantity: Number(tr.querySelector('[data-q]').value), vat_rate: tr.querySelector('[data-rate]').value.trim() || '0' };
      if (tr.dataset.price) {
        l.price_id = tr.dataset.price;
      } else {
        l.description = tr.querySelector('[data-desc]').value.trim();
        const a = parseAmount(tr.querySelector('[data-unit]').value || '', cur);
        if (a.error) return { error: a.error };
        l.unit_amount = a.minor;
      }
      lines.push(l);
    }
    const d = Number(form.elements.days_until_due.value);
    return { body: { line_items: lines, days_until_due: d, memo: form.elements.memo.value } };
  }

  async function save() {
    const b = body();
    if (b.error) { showFormError(form, b.error); return null; }
    return post(path, b.body);
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    await busy(form, async () => {
      try {
        if (await save()) { flash('ok', 'Draft saved.'); await ctx.reload(); }
      } catch (err) {
        showFormError(form, err);
      }
    });
  });
  form.querySelector('[data-send]').addEventListener('click', async () => {
    if (!(await confirmAction({ title: 'Send this invoice?', body: `It gets its number and ${inv.customer_email} receives a link to pay it. A sent invoice can no longer be edited.`, confirm: 'Send' }))) return;
    await busy(form, async () => {
      try {
        if (!(await save())) return;
        const s = await post(`${path}/send`);
        flash('ok', `Invoice ${s.number} sent to ${s.customer_email}.`);
        await ctx.reload();
      } catch (err) {
        showFormError(form, err);
      }
    });
  });
  form.querySelector('[data-delete]').addEventListener('click', async () => {
    if (!(await confirmAction({ title: 'Delete this draft?', body: 'The draft is removed for good.', confirm: 'Delete', danger: true }))) return;
    try {
      await del(path);
      flash('ok', 'Draft deleted.');
      ctx.navigate(`${ctx.base}/invoices`);
    } catch (err) {
      flash('error', errorText(err));
    }
  });

  return h('div', null,
    back,
    pageHead('Draft invoice'),
    facts([['Customer', `${inv.customer_name} <${inv.customer_email}>`], ['Currency', cur], ['Status', badge('draft')]]),
    notice('', 'Lines from the catalog keep their price; VAT is worked out per line and rounded to the cent.'),
    h('section', { class: 'panel', 'aria-label': 'Editor' }, form));
}
