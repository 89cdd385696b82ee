// @ts-check
// Overview: counts, gross volume per currency and the latest payments of one environment.
import { get } from '../api.js';
import { h } from '../dom.js';
import { money } from '../format.js';
import { table } from '../ui.js';
import { pageHead, paymentColumns } from './common.js';
import { mrrSection } from './mrr_chart.js';
import { volumeSection } from './volume_chart.js';

/** @param {import('../types').Ctx} ctx */
export async function list(ctx) {
  ctx.title('Overview');
  const [o, chart, bill, mrrChart] = await Promise.all([get(`${ctx.base}/overview`), volumeSection(ctx), get(`${ctx.base}/billing_summary`), mrrSection(ctx)]);
  const pay = o.payments || { count: 0, succeeded_count: 0, gross: [], disputed_count: 0, disputed: [] };
  const gross = pay.gross && pay.gross.length
    ? h('ul', { class: 'gross' }, pay.gross.map((g) => h('li', null, money(g.amount, g.currency))))
    : h('p', { class: 'value' }, '—');
  const card = (label, value, key) => h('div', { class: 'card', 'data-card': key },
    h('p', { class: 'label' }, label), value instanceof Node ? value : h('p', { class: 'value' }, String(value)));
  return h('div', null,
    pageHead('Overview'),
    ctx.env === 'test' && !pay.count ? gettingStarted(ctx) : null,
    h('div', { class: 'cards' },
      card('Payments', pay.count, 'payments'),
      card('Succeeded', pay.succeeded_count, 'succeeded'),
      card('Gross volume', gross, 'gross'),
      card('Disputed', disputedCard(ctx, pay), 'disputed'),
      card('Open checkout sessions', o.open_sessions_count, 'open_sessions'),
      card('Webhook endpoints', o.webhook_endpoints_count, 'webhook_endpoints')),
    recurring(ctx, bill, card),
    h('div', { class: 'charts' }, chart, mrrChart),
    h('h2', null, 'Recent payments'),
    table(paymentColumns(ctx.base), o.recent_payments || [],
      ctx.env === 'test'
        ? 'No payments yet. Create a checkout session with your test key and pay it with 4242 4242 4242 4242.'
        : 'No live payments yet.', 'Recent payments'),
    h('p', null, h('a', { href: `${ctx.base}/payments` }, 'All payments →')));
}

// recurring shows the monthly recurring revenue per currency (active and past-due
// subscriptions that are not paused, each brought to a month) and the active and past-due counts, linked to the
// subscriptions of that status.
function recurring(ctx, bill, card) {
  const mrr = bill.mrr.length
    ? h('ul', { class: 'gross' }, bill.mrr.map((m) => h('li', null, money(m.amount, m.currency))))
    : h('p', { class: 'value' }, '—');
  const count = (n, status) => h('p', { class: 'value' }, n ? h('a', { href: `${ctx.base}/subscriptions?status=${status}` }, String(n)) : '0');
  return h('section', { 'aria-labelledby': 'recurring-title' },
    h('h2', { id: 'recurring-title' }, 'Recurring revenue'),
    h('div', { class: 'cards' },
      card('Monthly recurring revenue', mrr, 'mrr'),
      card('Active subscriptions', count(bill.active_count, 'active'), 'active_subscriptions'),
      card('Past due', count(bill.past_due_count, 'past_due'), 'past_due_subscriptions')),
    h('p', { class: 'hint' }, 'Active and past-due subscriptions that are not paused, each amount brought to a month: yearly ÷ 12, weekly × 52 ÷ 12, daily × 365 ÷ 12, divided by the interval count. Paused ones still count as active.'));
}

// disputedCard counts the disputed payments (not among the succeeded ones) with their amounts
// per currency, linked to the disputes.
function disputedCard(ctx, pay) {
  const n = pay.disputed_count || 0;
  return h('div', null,
    h('p', { class: 'value' }, n ? h('a', { href: `${ctx.base}/disputes` }, String(n)) : '0'),
    n ? h('ul', { class: 'gross' }, (pay.disputed || []).map((g) => h('li', null, money(g.amount, g.currency)))) : null);
}

// gettingStarted walks a new merchant through a first test payment.
function gettingStarted(ctx) {
  return h('section', { class: 'panel', 'aria-labelledby': 'start-title', id: 'getting-started' },
    h('h2', { id: 'start-title' }, 'Take a test payment'),
    h('ol', null,
      h('li', null, 'Create a test key on the ', h('a', { href: `${ctx.base}/api_keys` }, 'API keys'), ' page (or use the one printed when the merchant was created).'),
      h('li', null, 'Create a checkout session: ', h('code', null, 'POST /v1/checkout/sessions'), ' with the key as Bearer token.'),
      h('li', null, 'Open its checkout_url (also linked on the ', h('a', { href: `${ctx.base}/checkout_sessions` }, 'Checkout sessions'), ' page) and pay with the card 4242 4242 4242 4242, any future expiry and any CVC.'),
      h('li', null, 'The payment shows up here; add a ', h('a', { href: `${ctx.base}/webhooks` }, 'webhook endpoint'), ' to be told about it.')));
}
