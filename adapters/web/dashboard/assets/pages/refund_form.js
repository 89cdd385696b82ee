// @ts-check
// The refund form of a payment's page, a Preact component: the amount starts at what is left
// to refund, the reason at "requested by the customer". One Idempotency-Key per form, so a
// double click or a retry after a lost answer makes one refund; a new key after each refund
// made, and after a refusal (a refused refund changed nothing: the next try is a new request).
import { postOnce } from '../api.js';
import { exponent, money, parseAmount, plain } from '../format.js';
import { html, useState } from '../preact.js';
import { Field, FormMessage, useIntent } from '../components.js';

const reasons = [['requested_by_customer', 'Requested by the customer'], ['duplicate', 'Duplicate payment'], ['fraudulent', 'Fraudulent']];

/**
 * @param {{ ctx: import('../types').Ctx, payment: import('../types').Payment, left: number }} props
 */
export function RefundForm({ ctx, payment: p, left }) {
  const [amount, setAmount] = useState(plain(left, exponent(p.currency)));
  const [reason, setReason] = useState('requested_by_customer');
  const { busy, error, run, fail } = useIntent(ctx, ['amount', 'reason'], 'amount');

  /** @param {SubmitEvent} ev */
  function submit(ev) {
    ev.preventDefault();
    const a = parseAmount(amount, p.currency);
    if (a.error) {
      fail(a.error);
      return;
    }
    const body = { amount: a.minor, reason: /** @type {'requested_by_customer' | 'duplicate' | 'fraudulent'} */ (reason) };
    run((key) => postOnce(`${ctx.base}/payments/${encodeURIComponent(p.id)}/refunds`, body, key),
      (r) => `Refunded ${money(r.amount, r.currency)}.`);
  }

  return html`<form class="stack" id="refund-form" novalidate aria-labelledby="pay-refund" aria-busy=${busy ? 'true' : undefined} onSubmit=${submit}>
    ${error && !error.field ? html`<${FormMessage} message=${error.message} />` : null}
    <h2 id="pay-refund">Refund</h2>
    <div class="inline-fields">
      <${Field} name="amount" label=${`Amount (${p.currency})`} hint=${`At most ${money(left, p.currency)}, what is left to refund.`}
        error=${error && error.field === 'amount' ? error.message : null}
        control=${(/** @type {any} */ a) => html`<input type="text" required inputmode="decimal" autocomplete="off" ...${a}
          defaultValue=${amount} onInput=${(/** @type {any} */ e) => setAmount(e.currentTarget.value)} />`} />
      <${Field} name="reason" label="Reason" error=${error && error.field === 'reason' ? error.message : null}
        control=${(/** @type {any} */ a) => html`<select ...${a} value=${reason} onChange=${(/** @type {any} */ e) => setReason(e.currentTarget.value)}>
          ${reasons.map(([v, label]) => html`<option value=${v}>${label}</option>`)}
        </select>`} />
    </div>
    <div><button type="submit" class="button button-primary" disabled=${busy}>Refund</button></div>
  </form>`;
}
