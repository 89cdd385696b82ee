// @ts-check
// Subscriptions: the list with a status filter (applied by its Filter button only) and, per
// subscription, its period, trial, default payment method, invoices (paged) and events, with the
// cancel form (pages/subscription_cancel.js). The server decides everything.
import { get, query } from '../api.js';
import { h } from '../dom.js';
import { badge, money, when } from '../format.js';
import { facts, notice, pager, table } from '../ui.js';
import { html, render } from '../preact.js';
import { missing, pageHead, statusFilter } from './common.js';
import { CancelForm } from './subscription_cancel.js';
import { PauseForm } from './subscription_pause.js';

const statuses = ['incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'unpaid', 'canceled'];

// subscriptionColumns are the columns of a subscriptions table; base is "/test" or "/live".
export function subscriptionColumns(base) {
  return [
    { label: 'Subscription', cell: (s) => h('a', { href: `${base}/subscriptions/${s.id}`, 'data-subscription': s.id }, s.id) },
    { label: 'Amount', num: true, cell: (s) => money(s.amount, s.currency) },
    { label: 'Status', cell: (s) => [badge(s.status), s.cancel_at_period_end ? h('span', { class: 'hint' }, ' ends at period end') : null] },
    { label: 'Current period ends', cell: (s) => when(s.current_period_end) },
    { label: 'Created', cell: (s) => when(s.created) },
  ];
}

/** @param {import('../types').Ctx} ctx */
export async function list(ctx) {
  ctx.title('Subscriptions');
  const status = ctx.query.get('status') || '';
  const page = await get(`${ctx.base}/subscriptions${query({ status, limit: 20, starting_after: ctx.query.get('starting_after') || '', ending_before: ctx.query.get('ending_before') || '' })}`);
  return h('div', null,
    pageHead('Subscriptions'),
    statusFilter(ctx, statuses, status),
    table(subscriptionColumns(ctx.base), page.data,
      status ? `No ${status.replaceAll('_', ' ')} subscriptions.` : 'No subscriptions yet. Create one with POST /v1/subscriptions or a subscription checkout.', 'Subscriptions'),
    pager(ctx, page));
}

/** @param {import('../types').Ctx} ctx */
export async function detail(ctx) {
  ctx.title('Subscription');
  const back = h('a', { href: `${ctx.base}/subscriptions` }, 'Back to the subscriptions');
  let d;
  try {
    d = await get(`${ctx.base}/subscriptions/${encodeURIComponent(ctx.id || '')}`);
  } catch (err) {
    return missing(err, 'Subscription', back);
  }
  const s = d.subscription;
  const pm = s.default_payment_method;
  const pmText = !pm ? 'None saved yet' : pm.type === 'sepa_debit' ? `SEPA debit •••• ${pm.last4}`
    : `${pm.brand ? pm.brand.charAt(0).toUpperCase() + pm.brand.slice(1) : 'Card'} •••• ${pm.last4}, expires ${String(pm.exp_month).padStart(2, '0')}/${pm.exp_year}`;
  const ended = s.status === 'canceled' || s.status === 'incomplete_expired';
  const panel = h('section', { class: 'panel', 'aria-labelledby': 'sub-cancel' });
  if (!ended) render(html`<${CancelForm} ctx=${ctx} sub=${s} />`, panel);
  const invoices = await subscriptionInvoices(ctx, s.id);
  // Pausing: the statuses that can pause, or a paused one (pages/subscription_pause.js).
  const pausable = s.pause_collection || ['active', 'trialing', 'past_due'].includes(s.status);
  const pausePanel = h('section', { class: 'panel', 'aria-labelledby': 'sub-pause', id: 'sub-pause-panel' });
  if (pausable) render(html`<${PauseForm} ctx=${ctx} sub=${s} />`, pausePanel);
  return h('div', null,
    back,
    pageHead(`Subscription ${money(s.amount, s.currency)}`),
    s.cancel_at_period_end && !ended ? notice('', 'This subscription ends at the end of its current period, ', when(s.current_period_end), '. Resume it to keep it renewing.') : null,
    facts([
      ['Status', badge(s.status)],
      ['Customer', h('a', { href: `${ctx.base}/customers/${d.customer.id}`, 'data-customer': d.customer.id }, `${d.customer.name} <${d.customer.email}>`)],
      ['Amount', `${money(s.amount, s.currency)} (quantity ${s.quantity})`],
      ['Price', h('code', null, s.price_id)],
      ['Scheduled change', s.pending_update ? [money(s.pending_update.amount, s.currency), ' (', h('code', null, s.pending_update.price_id),
        ` × ${s.pending_update.quantity}) from `, when(s.pending_update.effective_at)] : null],
      ['Current period', [when(s.current_period_start), ' – ', when(s.current_period_end)]],
      ['Trial ends', s.trial_end ? when(s.trial_end) : 'No trial'],
      ['Default payment method', pmText],
      ['Cancellation asked', s.canceled_at ? when(s.canceled_at) : null],
      ['Ended', s.ended_at ? when(s.ended_at) : null],
      ['Id', h('code', null, s.id)],
      ['Created', when(s.created)],
    ]),
    pausable ? pausePanel : null,
    ended ? null : panel,
    h('h2', null, 'Invoices'),
    invoices,
    h('h2', null, 'Events'),
    table([
      { label: 'Event', cell: (e) => h('code', null, e.type) },
      { label: 'Date', cell: (e) => when(e.created, '—', true) },
    ], d.events, 'No events.', 'Events'));
}

// subscriptionInvoices is the table of the subscription's invoices, newest first, ten a page
// (the page's starting_after / ending_before move through them).
/** @param {import('../types').Ctx} ctx @param {string} id */
async function subscriptionInvoices(ctx, id) {
  const page = await get(`${ctx.base}/invoices${query({ subscription: id, limit: 10, starting_after: ctx.query.get('starting_after') || '', ending_before: ctx.query.get('ending_before') || '' })}`);
  return h('div', null,
    table([
      { label: 'Number', cell: (i) => h('a', { href: `${ctx.base}/invoices/${i.id}`, 'data-invoice': i.id }, i.number || 'Draft') },
      { label: 'Total', num: true, cell: (i) => money(i.total_amount, i.currency) },
      { label: 'Status', cell: (i) => badge(i.status) },
      { label: 'Created', cell: (i) => when(i.created) },
    ], page.data, 'No invoices yet.', 'Invoices'),
    pager(ctx, page));
}
