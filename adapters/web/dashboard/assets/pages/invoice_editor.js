// @ts-check
// The draft invoice editor, a Preact component: free-form and catalog lines, VAT per line, live
// totals, save, send and delete. The server decides everything; the live totals preview the
// same exact arithmetic (VAT per line, half-up, in minor units). A catalog line keeps its
// price: its description and unit price are read-only.
import { del, post } from '../api.js';
import { exponent, money, parseAmount, plain } from '../format.js';
import { html, useEffect, useRef, useState } from '../preact.js';
import { confirmAction, errorText, flash } from '../ui.js';
import { Field, FormMessage, formError } from '../components.js';

/**
 * @typedef {object} Line
 * @property {number} n the line's number in the editor (labels say "line n"), never reused
 * @property {string | null} priceID the catalog price of a catalog line
 * @property {number | null} priceUnit its unit amount in minor units
 * @property {string} description
 * @property {string} quantity as typed
 * @property {string} unit the unit price as typed (free-form lines)
 * @property {string} rate the VAT rate as typed, percent
 */

/**
 * @typedef {{ id: string, label: string, unit: number, currency: string, name: string }} CatalogPrice
 */

// vatOf is round half-up(quantity × unit × rate / 100) in minor units, rate a decimal string
// with at most two decimals: exact, in BigInt.
/**
 * @param {number} quantity
 * @param {number} unit
 * @param {string} rate
 */
export function vatOf(quantity, unit, rate) {
  const m = /^(\d{1,3})(?:\.(\d{1,2}))?$/.exec(rate || '0');
  if (!m) return null;
  const bp = BigInt(m[1]) * 100n + BigInt((m[2] || '').padEnd(2, '0') || '0');
  return Number((BigInt(quantity) * BigInt(unit) * bp + 5000n) / 10000n);
}

/**
 * lineAmount is a line's amount and VAT in minor units, or null when a field is not valid.
 * @param {Line} l
 * @param {string} cur
 */
function lineAmount(l, cur) {
  const q = Number(l.quantity);
  const unit = l.priceID ? l.priceUnit : parseAmount(l.unit || '0', cur).minor;
  const rate = l.rate.trim() || '0';
  const v = Number.isInteger(q) && q >= 1 && Number.isSafeInteger(unit) ? vatOf(q, unit, rate) : null;
  return v === null ? null : { amount: q * unit, vat: v };
}

/**
 * @param {{ ctx: import('../types').Ctx, inv: import('../types').Invoice, path: `/${string}/invoices/${string}`, prices: CatalogPrice[] }} props
 */
export function InvoiceEditor({ ctx, inv, path, prices }) {
  const cur = inv.currency;
  const count = useRef(0);
  /** @param {Partial<Line>} l */
  const newLine = (l) => {
    count.current += 1;
    return { n: count.current, priceID: null, priceUnit: null, description: '', quantity: '1', unit: '', rate: '0', ...l };
  };
  const [lines, setLines] = useState(() => inv.line_items.map((l) => newLine({
    priceID: l.price_id || null,
    priceUnit: l.price_id ? l.unit_amount : null,
    description: l.description,
    quantity: String(l.quantity),
    unit: plain(l.unit_amount, exponent(cur)),
    rate: l.vat_rate,
  })));
  const [days, setDays] = useState(String(inv.days_until_due));
  const [memo, setMemo] = useState(inv.memo || '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {import('../components.js').FormError | null} */ (null));
  const [picked, setPicked] = useState('');
  // focusNext names the element to focus after the next render (a new line's field, the add
  // button after a removal).
  const focusNext = useRef(/** @type {string | null} */ (null));
  const form = useRef(/** @type {HTMLFormElement | null} */ (null));
  useEffect(() => {
    if (!focusNext.current || !form.current) return;
    const el = form.current.querySelector(focusNext.current);
    focusNext.current = null;
    if (el instanceof HTMLElement) el.focus();
  });

  /** @param {number} n @param {Partial<Line>} change */
  const update = (n, change) => setLines((ls) => ls.map((l) => (l.n === n ? { ...l, ...change } : l)));

  let sub = 0; let vat = 0; let ok = true;
  const amounts = lines.map((l) => {
    const a = lineAmount(l, cur);
    if (a === null) { ok = false; return null; }
    sub += a.amount; vat += a.vat;
    return a.amount;
  });
  const totalText = (/** @type {number} */ v) => (ok ? money(v, cur) : '—');

  function addLine() {
    const l = newLine({});
    focusNext.current = `#line-${l.n}-description`;
    setLines((ls) => [...ls, l]);
  }

  // The chosen price is added by its button, never on the select's change: arrowing through
  // the options must not add lines or move the focus (WCAG 3.2.2 On Input).
  function addPicked() {
    const p = prices.find((x) => x.id === picked);
    if (!p) {
      flash('error', 'Choose a price to add.');
      /** @type {HTMLElement | null} */ (document.getElementById('catalog-price'))?.focus();
      return;
    }
    const l = newLine({ priceID: p.id, priceUnit: p.unit, description: p.name, quantity: '1', unit: plain(p.unit, exponent(cur)), rate: '0' });
    focusNext.current = `#line-${l.n}-quantity`;
    setLines((ls) => [...ls, l]);
    setPicked('');
  }

  /** @param {number} n */
  function remove(n) {
    focusNext.current = '[data-add-line]';
    setLines((ls) => ls.filter((l) => l.n !== n));
  }

  function body() {
    const items = [];
    for (const l of lines) {
      /** @type {import('../types').Schemas['DashboardInvoiceLine']} */
      const item = { quantity: Number(l.quantity), vat_rate: l.rate.trim() || '0' };
      if (l.priceID) {
        item.price_id = l.priceID;
      } else {
        item.description = l.description.trim();
        const a = parseAmount(l.unit || '', cur);
        if (a.error) return { error: a.error };
        item.unit_amount = a.minor;
      }
      items.push(item);
    }
    return { body: { line_items: items, days_until_due: Number(days), memo } };
  }

  const fields = ['days_until_due', 'memo'];
  async function save() {
    const b = body();
    if (b.error) { setError(formError(b.error, fields)); return null; }
    return post(path, b.body);
  }

  /** @param {() => Promise<void>} fn */
  async function run(fn) {
    setError(null);
    setBusy(true);
    try {
      await fn();
    } catch (err) {
      setError(formError(err, fields));
    } finally {
      setBusy(false);
    }
  }

  /** @param {SubmitEvent} ev */
  function submit(ev) {
    ev.preventDefault();
    return run(async () => {
      if (await save()) { flash('ok', 'Draft saved.'); await ctx.reload(); }
    });
  }

  async function send() {
    if (!(await confirmAction({ title: 'Send this invoice?', body: `It gets its number and ${inv.customer_email} receives a link to pay it. A sent invoice can no longer be edited.`, confirm: 'Send' }))) return;
    await run(async () => {
      if (!(await save())) return;
      const s = await post(`${path}/send`);
      flash('ok', `Invoice ${s.number} sent to ${s.customer_email}.`);
      await ctx.reload();
    });
  }

  async function remove_() {
    if (!(await confirmAction({ title: 'Delete this draft?', body: 'The draft is removed for good.', confirm: 'Delete', danger: true }))) return;
    try {
      await del(path);
      flash('ok', 'Draft deleted.');
      ctx.navigate(`${ctx.base}/invoices`);
    } catch (err) {
      flash('error', errorText(err));
    }
  }

  /** @param {string} label @param {Line} l @param {string} id @param {any} input */
  const cell = (label, l, id, input) => html`<td><label class="visually-hidden" for=${id}>${label}, line ${l.n}</label>${input}</td>`;
  const onInput = (/** @type {number} */ n, /** @type {keyof Line} */ k) => (/** @type {any} */ e) => update(n, { [k]: e.currentTarget.value });

  return html`<form class="stack" id="invoice-editor" novalidate ref=${form} aria-busy=${busy ? 'true' : undefined} onSubmit=${submit}>
    ${error && !error.field ? html`<${FormMessage} message=${error.message} />` : null}
    <div class="table-wrap"><table class="editor-lines">
      <caption class="visually-hidden">Lines</caption>
      <thead><tr>${['Description', 'Qty', 'Unit price', 'VAT %', 'Amount', ''].map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
      <tbody id="lines">
        ${lines.map((l, i) => html`<tr key=${l.n} data-line="" data-price=${l.priceID || undefined} data-unit=${l.priceID ? String(l.priceUnit) : undefined}>
          ${cell('Description', l, `line-${l.n}-description`, html`<input type="text" id=${`line-${l.n}-description`} defaultValue=${l.description} maxlength="500" data-desc="" readonly=${!!l.priceID} autocomplete="off" onInput=${onInput(l.n, 'description')} />`)}
          ${cell('Quantity', l, `line-${l.n}-quantity`, html`<input type="text" id=${`line-${l.n}-quantity`} defaultValue=${l.quantity} inputmode="numeric" size="5" data-q="" onInput=${onInput(l.n, 'quantity')} />`)}
          ${cell('Unit price', l, `line-${l.n}-unit`, html`<input type="text" id=${`line-${l.n}-unit`} defaultValue=${l.unit} inputmode="decimal" size="9" data-unit="" readonly=${!!l.priceID} onInput=${onInput(l.n, 'unit')} />`)}
          ${cell('VAT %', l, `line-${l.n}-vat`, html`<input type="text" id=${`line-${l.n}-vat`} defaultValue=${l.rate} inputmode="decimal" size="6" data-rate="" onInput=${onInput(l.n, 'rate')} />`)}
          <td class="num" data-amount="">${amounts[i] === null ? '—' : money(amounts[i], cur)}</td>
          <td><button type="button" class="button button-small" aria-label=${`Remove line ${l.n}`} disabled=${busy} onClick=${() => remove(l.n)}>Remove</button></td>
        </tr>`)}
      </tbody>
      <tfoot>
        <tr><th scope="row" colspan="4">Subtotal</th><td class="num"><output id="total-subtotal">${totalText(sub)}</output></td><td></td></tr>
        <tr><th scope="row" colspan="4">VAT</th><td class="num"><output id="total-vat">${totalText(vat)}</output></td><td></td></tr>
        <tr><th scope="row" colspan="4">Total</th><td class="num"><output id="total-total">${totalText(sub + vat)}</output></td><td></td></tr>
      </tfoot>
    </table></div>
    <p class="visually-hidden" role="status" aria-live="polite" id="totals-status">${ok ? `Total ${money(sub + vat, cur)}` : 'Check the lines: a quantity, price or VAT rate is not valid.'}</p>
    <div class="actions">
      <button type="button" class="button" data-add-line="" disabled=${busy} onClick=${addLine}>Add a line</button>
      <label for="catalog-price">Add from the catalog</label>
      <select id="catalog-price" disabled=${!prices.length} value=${picked} onChange=${(/** @type {any} */ e) => setPicked(e.currentTarget.value)}>
        <option value="">${prices.length ? 'Choose a price…' : 'No one-time prices in the catalog'}</option>
        ${prices.map((p) => html`<option value=${p.id} disabled=${p.currency !== cur}>${p.currency === cur ? p.label : `${p.label} (other currency)`}</option>`)}
      </select>
      <button type="button" class="button" data-add-price="" disabled=${busy || !prices.length} onClick=${addPicked}>Add price</button>
    </div>
    <${Field} name="days_until_due" label="Days until due" error=${error && error.field === 'days_until_due' ? error.message : null}
      control=${(/** @type {any} */ a) => html`<input type="text" inputmode="numeric" size="4" ...${a} defaultValue=${days} onInput=${(/** @type {any} */ e) => setDays(e.currentTarget.value)} />`} />
    <${Field} name="memo" label="Memo (optional)" error=${error && error.field === 'memo' ? error.message : null}
      control=${(/** @type {any} */ a) => html`<textarea rows="2" maxlength="5000" ...${a} defaultValue=${memo} onInput=${(/** @type {any} */ e) => setMemo(e.currentTarget.value)}></textarea>`} />
    <div class="actions">
      <button type="submit" class="button" data-save="" disabled=${busy}>Save draft</button>
      <button type="button" class="button button-primary" data-send="" disabled=${busy} onClick=${send}>Send invoice</button>
      <button type="button" class="button button-danger" data-delete="" disabled=${busy} onClick=${remove_}>Delete draft</button>
    </div>
  </form>`;
}
