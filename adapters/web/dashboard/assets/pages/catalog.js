// @ts-check
// Catalog: products (list with an active filter, create, archive) and, per product, its prices
// (list, create, archive). Amounts are typed in major units ("12.50") and sent in minor units
// of the chosen currency.
import { get, post, query } from '../api.js';
import { h } from '../dom.js';
import { badge, currencies, exponent, money, parseAmount, when } from '../format.js';
import { busy, confirmAction, errorText, facts, field, flash, pager, showFormError, table } from '../ui.js';
import { filterForm, missing, pageHead } from './common.js';

function archiveButton(label, what, run) {
  return h('button', {
    type: 'button', class: 'button button-small button-danger', 'data-archive': '',
    'aria-label': `Archive ${what}`,
    onclick: async (ev) => {
      const ok = await confirmAction({
        title: `Archive ${what}?`,
        body: label,
        confirm: 'Archive', danger: true,
      });
      if (!ok) return;
      const btn = ev.target;
      btn.disabled = true;
      try {
        await run();
      } catch (err) {
        btn.disabled = false;
        flash('error', `Archiving failed: ${errorText(err)}`);
      }
    },
  }, 'Archive');
}

function activeBadge(x) { return badge(x.active ? 'active' : 'archived'); }

/** @param {import('../types').Ctx} ctx */
export async function list(ctx) {
  ctx.title('Catalog');
  const active = ctx.query.get('active') || '';
  const after = ctx.query.get('starting_after') || '';
  const before = ctx.query.get('ending_before') || '';
  const page = await get(`${ctx.base}/products${query({ active, limit: 20, starting_after: after, ending_before: before })}`);

  const form = h('form', { class: 'stack', id: 'create-product', novalidate: true },
    field({ label: 'Name', name: 'name', required: true, attrs: { maxlength: 250, autocomplete: 'off' } }),
    field({ label: 'Description (optional)', name: 'description', control: h('textarea', { rows: 2, maxlength: 5000 }) }),
    h('div', null, h('button', { type: 'submit', class: 'button button-primary' }, 'Create product')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = { name: form.elements.name.value.trim() };
    const description = form.elements.description.value.trim();
    if (description) body.description = description;
    if (!body.name) return showFormError(form, 'Give the product a name.', 'name');
    await busy(form, async () => {
      try {
        const p = await post(`${ctx.base}/products`, body);
        ctx.navigate(`${ctx.base}/catalog/${p.id}`);
      } catch (err) {
        showFormError(form, err, 'name');
      }
    });
  });

  return h('div', null,
    pageHead('Catalog'),
    filterForm(ctx, { name: 'active', label: 'Show', values: [['true', 'Active'], ['false', 'Archived']], current: active }),
    table([
      { label: 'Product', cell: (p) => h('a', { href: `${ctx.base}/catalog/${p.id}`, 'data-product': p.id }, p.name) },
      { label: 'Prices', cell: (p) => priceSummary(p) },
      { label: 'Status', cell: activeBadge },
      { label: 'Created', cell: (p) => when(p.created) },
      { label: 'Actions', cell: (p) => (p.active ? archiveButton('The product and all its prices can no longer be used in new checkout sessions. Existing payments are not affected.', `"${p.name}"`, async () => {
        await post(`${ctx.base}/products/${encodeURIComponent(p.id)}/archive`);
        await ctx.reload();
        flash('ok', `"${p.name}" archived.`);
      }) : '') },
    ], page.data, active === 'false' ? 'No archived products.' : 'No products yet.', 'Products'),
    pager(ctx, page),
    h('section', { class: 'panel', 'aria-labelledby': 'new-product' }, h('h2', { id: 'new-product' }, 'Create a product'), form));
}

function priceSummary(p) {
  const live = (p.prices || []).filter((x) => x.active);
  if (!live.length) return '—';
  const first = priceLabel(live[0]);
  return live.length > 1 ? `${first} and ${live.length - 1} more` : first;
}

function priceLabel(pr) {
  const amount = money(pr.unit_amount, pr.currency);
  if (!pr.recurring) return amount;
  const n = pr.recurring.interval_count || 1;
  return n === 1 ? `${amount} / ${pr.recurring.interval}` : `${amount} every ${n} ${pr.recurring.interval}s`;
}

/** @param {import('../types').Ctx} ctx */
export async function detail(ctx) {
  ctx.title('Product');
  const back = h('a', { href: `${ctx.base}/catalog` }, 'Back to the catalog');
  const base = /** @type {const} */ (`${ctx.base}/products/${encodeURIComponent(ctx.id)}`);
  let product;
  let prices;
  try {
    [product, prices] = await Promise.all([get(base), get(`${base}/prices${query({ limit: 100 })}`)]);
  } catch (err) {
    return missing(err, 'Product', back);
  }
  ctx.title(product.name);

  const currencySelect = h('select', { name: 'currency' },
    currencies.map((c) => h('option', { value: c, selected: c === 'EUR' }, c)));
  const intervalSelect = h('select', { name: 'interval' },
    h('option', { value: '' }, 'One-time'),
    ['day', 'week', 'month', 'year'].map((i) => h('option', { value: i }, `Every ${i}`)));
  const countField = field({ label: 'Interval count', name: 'interval_count', type: 'number', value: '1', attrs: { min: 1, max: 365 } });
  countField.hidden = true;
  intervalSelect.addEventListener('change', () => { countField.hidden = !intervalSelect.value; });
  const amountHint = () => (exponent(currencySelect.value) === 0 ? `Whole ${currencySelect.value}, e.g. 1200.` : `In ${currencySelect.value}, e.g. 12.50.`);
  const amountField = field({ label: 'Amount', name: 'unit_amount', required: true, hint: amountHint(), attrs: { inputmode: 'decimal', autocomplete: 'off' } });
  currencySelect.addEventListener('change', () => { amountField.querySelector('.hint').textContent = amountHint(); });

  const form = h('form', { class: 'stack', id: 'create-price', novalidate: true },
    h('div', { class: 'inline-fields' },
      amountField,
      field({ label: 'Currency', name: 'currency', control: currencySelect }),
      field({ label: 'Billing', name: 'recurring', control: intervalSelect }),
      countField),
    h('div', null, h('button', { type: 'submit', class: 'button button-primary' }, 'Add price')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const currency = currencySelect.value;
    const amount = parseAmount(form.elements.unit_amount.value, currency);
    if (amount.error) return showFormError(form, amount.error, 'unit_amount');
    const body = { unit_amount: amount.minor, currency: currency.toLowerCase() };
    if (intervalSelect.value) {
      body.recurring = { interval: intervalSelect.value, interval_count: Number(form.elements.interval_count.value || 1) };
    }
    await busy(form, async () => {
      try {
        const pr = await post(`${base}/prices`, body);
        await ctx.reload();
        flash('ok', `Price ${priceLabel(pr)} added.`);
      } catch (err) {
        showFormError(form, err, 'unit_amount');
      }
    });
  });

  const productActive = product.active;
  return h('div', null,
    h('p', { class: 'breadcrumb' }, h('a', { href: `${ctx.base}/catalog` }, 'Catalog'), ' / ', h('span', { class: 'mono' }, ctx.id)),
    pageHead(product.name, activeBadge(product),
      productActive ? archiveButton('The product and all its prices can no longer be used in new checkout sessions.', 'this product', async () => {
        await post(`${base}/archive`);
        await ctx.reload();
        flash('ok', 'Product archived, with its prices.');
      }) : null),
    h('section', { class: 'panel', 'aria-labelledby': 'prod-facts' },
      h('h2', { id: 'prod-facts' }, 'Product'),
      facts([
        ['ID', h('span', { class: 'mono' }, product.id)],
        ['Description', product.description],
        ['Default price', product.default_price ? h('span', { class: 'mono' }, product.default_price) : null],
        ['Created', when(product.created)],
        ['Updated', when(product.updated)],
      ])),
    h('h2', null, 'Prices'),
    table([
      { label: 'Price', cell: (pr) => priceLabel(pr) },
      { label: 'ID', cell: (pr) => h('span', { class: 'mono' }, pr.id) },
      { label: 'Type', cell: (pr) => pr.type.replace('_', '-') },
      { label: 'Status', cell: activeBadge },
      { label: 'Created', cell: (pr) => when(pr.created) },
      { label: 'Actions', cell: (pr) => (pr.active ? archiveButton('New checkout sessions can no longer use this price.', `price ${priceLabel(pr)}`, async () => {
        await post(`${ctx.base}/prices/${encodeURIComponent(pr.id)}/archive`);
        await ctx.reload();
        flash('ok', `Price ${priceLabel(pr)} archived.`);
      }) : '') },
    ], prices.data || [], 'No prices yet.', 'Prices'),
    productActive ? h('section', { class: 'panel', 'aria-labelledby': 'new-price' }, h('h2', { id: 'new-price' }, 'Add a price'), form) : null);
}
