// @ts-check
// Disputes: the environment's chargebacks, those that need a response first with the time left
// to answer, and one dispute with its facts and the evidence form. The payment's page shows its
// dispute with the same panel (disputePanel).
import { get, newKey, postOnce, query } from '../api.js';
import { h } from '../dom.js';
import { badge, money, when } from '../format.js';
import { busy, facts, field, flash, showFormError, table } from '../ui.js';
import { missing, pageHead } from './common.js';

// MAX_EVIDENCE is the longest evidence the API accepts, in characters.
const MAX_EVIDENCE = 20000;

// timeLeft words the seconds left to respond: "6 days 23 hours left", "45 minutes left".
export function timeLeft(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds <= 0) return 'No time left';
  const days = Math.floor(seconds / 86400);
  const hours = Math.floor((seconds % 86400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const unit = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (days) return `${unit(days, 'day')}${hours ? ` ${unit(hours, 'hour')}` : ''} left`;
  if (hours) return `${unit(hours, 'hour')}${minutes ? ` ${unit(minutes, 'minute')}` : ''} left`;
  if (minutes) return `${unit(minutes, 'minute')} left`;
  return 'Less than a minute left';
}

// outcome says in words where the dispute stands (text, or nodes with the deadline's time).
function outcome(d) {
  switch (d.status) {
    case 'needs_response': return ['Respond by ', when(d.evidence_due_by, '—', true), ` (${timeLeft(d.seconds_left).toLowerCase()}).`];
    case 'under_review': return 'The evidence was submitted; the bank is reviewing it.';
    case 'won': return 'Won: the disputed amount and the dispute fee are returned, and the payment is back to its previous status.';
    case 'lost': return d.past_due ? 'Lost: no evidence was submitted in time.' : 'Lost: the bank decided for the cardholder.';
    default: return '';
  }
}

/** @param {import('../types').Ctx} ctx */
export async function list(ctx) {
  ctx.title('Disputes');
  const after = ctx.query.get('starting_after') || '';
  const page = await get(`${ctx.base}/disputes${query({ limit: 50, starting_after: after })}`);
  const columns = [
    { label: 'Amount', num: true, cell: (d) => h('a', { href: `${ctx.base}/disputes/${encodeURIComponent(d.id)}`, 'data-dispute': d.id }, money(d.amount, d.currency)) },
    { label: 'Status', cell: (d) => badge(d.status) },
    { label: 'Time left to respond', cell: (d) => (d.status === 'needs_response' ? timeLeft(d.seconds_left) : '—') },
    { label: 'Reason', cell: (d) => d.reason.replaceAll('_', ' ') },
    { label: 'Payment', cell: (d) => h('a', { href: `${ctx.base}/payments/${encodeURIComponent(d.payment_id)}`, class: 'mono' }, d.payment_id) },
    { label: 'Opened', cell: (d) => when(d.created) },
  ];
  return h('div', null,
    pageHead('Disputes'),
    h('p', { class: 'hint' }, 'A dispute is a chargeback: the cardholder\'s bank takes the payment back. Disputes that need your response come first; answer each with evidence before its deadline.'),
    table(columns, page.data, 'No disputes.', 'Disputes'),
    pages(ctx, page, after));
}

// pages links the first page and the next one (the list continues after its last dispute).
/** @param {import('../types').Ctx} ctx @param {{ data: import('../types').Schemas['DashboardDispute'][], has_more: boolean }} page @param {string} after */
function pages(ctx, page, after) {
  const links = [];
  if (after) links.push(h('a', { href: ctx.href({ starting_after: null }), class: 'button', 'data-pager': 'first' }, '← First page'));
  if (page.has_more && page.data.length) {
    links.push(h('a', { href: ctx.href({ starting_after: page.data[page.data.length - 1].id }), class: 'button', 'data-pager': 'next', rel: 'next' }, 'Next page →'));
  }
  return links.length ? h('nav', { class: 'pager', 'aria-label': 'Pages' }, links) : null;
}

/** @param {import('../types').Ctx} ctx */
export async function detail(ctx) {
  const back = h('a', { href: `${ctx.base}/disputes` }, 'Back to disputes');
  let d;
  try {
    d = await get(`${ctx.base}/disputes/${encodeURIComponent(ctx.id)}`);
  } catch (err) {
    return missing(err, 'Dispute', back);
  }
  ctx.title(`Dispute ${money(d.amount, d.currency)}`);
  return h('div', null,
    h('p', { class: 'breadcrumb' }, h('a', { href: `${ctx.base}/disputes` }, 'Disputes'), ' / ', h('span', { class: 'mono' }, d.id)),
    pageHead(`Dispute of ${money(d.amount, d.currency)}`, badge(d.status)),
    disputePanel(ctx, d, { headingLevel: 'h2', withPaymentLink: true }));
}

// disputePanel shows a dispute's facts and, while it needs a response, the evidence form.
/** @param {import('../types').Ctx} ctx @param {import('../types').Schemas['DashboardDispute']} d @param {{ headingLevel?: string, withPaymentLink?: boolean }} [opts] */
export function disputePanel(ctx, d, { headingLevel = 'h2', withPaymentLink = false } = {}) {
  const titleID = `dispute-title-${d.id}`;
  const fee = d.currency === 'EUR' || !d.fee_rate ? money(d.fee, d.currency)
    : `${money(d.fee, d.currency)} (${money(d.fee_eur, 'EUR')} at 1 EUR = ${d.fee_rate} ${d.currency})`;
  return h('section', { class: 'panel', id: 'dispute', 'aria-labelledby': titleID, 'data-dispute': d.id },
    h(headingLevel, { id: titleID }, 'Dispute'),
    h('p', { id: 'dispute-outcome', role: 'status' }, outcome(d)),
    facts([
      ['ID', h('span', { class: 'mono' }, d.id)],
      ['Status', badge(d.status)],
      ['Amount', money(d.amount, d.currency)],
      ['Reason', d.reason.replaceAll('_', ' ')],
      ['Dispute fee', fee],
      ['Opened', when(d.created, '—', true)],
      ['Evidence due by', when(d.evidence_due_by, '—', true)],
      ['Time left', d.status === 'needs_response' ? timeLeft(d.seconds_left) : null],
      ['Evidence submitted', d.evidence_submitted_at ? when(d.evidence_submitted_at, '—', true) : null],
      ['Closed', d.closed_at ? when(d.closed_at, '—', true) : null],
      ['Payment', withPaymentLink ? h('a', { href: `${ctx.base}/payments/${encodeURIComponent(d.payment_id)}`, class: 'mono' }, d.payment_id) : null],
    ]),
    d.status === 'needs_response' ? evidenceForm(ctx, d)
      : d.evidence ? h('div', null, h('h3', null, 'Evidence'), h('pre', { class: 'evidence', id: 'dispute-evidence' }, d.evidence)) : null);
}

// evidenceForm saves a draft or submits the evidence. One Idempotency-Key per form, so a
// double click saves once; a new key after each save and after a refusal.
/** @param {import('../types').Ctx} ctx @param {import('../types').Schemas['DashboardDispute']} d */
function evidenceForm(ctx, d) {
  let key = newKey();
  const text = h('textarea', { name: 'text', rows: 8, maxlength: String(MAX_EVIDENCE) }, d.evidence || '');
  const count = h('p', { class: 'hint', id: `evidence-count-${d.id}`, 'aria-live': 'polite' });
  const update = () => { count.textContent = `${[...text.value].length} of ${MAX_EVIDENCE} characters.`; };
  text.addEventListener('input', update);
  update();
  const save = h('button', { type: 'submit', class: 'button', name: 'action', value: 'save', 'data-action': 'save' }, 'Save draft');
  const submit = h('button', { type: 'submit', class: 'button button-primary', name: 'action', value: 'submit', 'data-action': 'submit' }, 'Submit evidence');
  const form = h('form', { class: 'stack', id: 'evidence-form', novalidate: true, 'aria-labelledby': `evidence-title-${d.id}` },
    h('h3', { id: `evidence-title-${d.id}` }, 'Respond with evidence'),
    field({ label: 'Evidence', name: 'text', control: text,
      hint: 'Describe what shows the payment was genuine: delivery confirmation, correspondence with the customer, the terms they accepted. A draft can be changed; submitted evidence is final.' }),
    count,
    h('div', { class: 'toolbar' }, save, submit));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const submitting = ev.submitter ? ev.submitter.value === 'submit' : false;
    const body = { text: text.value, submit: submitting };
    await busy(form, async () => {
      try {
        const r = await postOnce(`${ctx.base}/disputes/${encodeURIComponent(d.id)}/evidence`, body, key);
        key = newKey();
        await ctx.reload();
        flash('ok', r.status === 'under_review' ? 'Evidence submitted. The bank is reviewing it.' : 'Draft saved.');
      } catch (err) {
        if (err.status && err.status < 500) key = newKey();
        showFormError(form, err, 'text');
      }
    });
  });
  return form;
}
