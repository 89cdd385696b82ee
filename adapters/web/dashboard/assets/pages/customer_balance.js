// @ts-check
// The balance adjustment form of a customer's page, a Preact component: credit the customer
// (the next invoices in that currency take it first) or add to what the customer owes (the
// next invoice adds it), in one currency, with an optional note. The server decides everything
// (the amount, the currency, the note's length); one Idempotency-Key per intent, a new one
// after each answer (useIntent).
import { postOnce } from '../api.js';
import { currencies, money, parseAmount } from '../format.js';
import { html, useState } from '../preact.js';
import { Field, FormMessage, formError, useIntent } from '../components.js';

/** The longest note the server takes, in characters. */
const MAX_DESCRIPTION = 350;

const fields = ['amount', 'currency', 'description'];

/**
 * @param {{ ctx: import('../types').Ctx, customer: import('../types').Schemas['Customer'], currency: string }} props
 */
export function BalanceForm({ ctx, customer, currency: initial }) {
  const [direction, setDirection] = useState('credit');
  const [amount, setAmount] = useState('');
  const [currency, setCurrency] = useState(initial);
  const [description, setDescription] = useState('');
  const [local, setLocal] = useState(/** @type {import('../components.js').FormError | null} */ (null));
  const { busy, error: sent, run } = useIntent(ctx, fields);
  const error = local || sent;

  /** @param {SubmitEvent} ev */
  function submit(ev) {
    ev.preventDefault();
    setLocal(null);
    const a = parseAmount(amount, currency);
    if (a.error || !a.minor) {
      setLocal(formError(a.error || 'Enter an amount above zero.', fields, 'amount'));
      return;
    }
    const minor = direction === 'credit' ? -a.minor : a.minor;
    const body = description.trim() ? { amount: minor, currency, description: description.trim() } : { amount: minor, currency };
    run((key) => postOnce(`${ctx.base}/customers/${encodeURIComponent(customer.id)}/balance_transactions`, body, key),
      direction === 'credit' ? `Credited ${money(a.minor, currency)} to the customer's balance.` : `Added ${money(a.minor, currency)} to what the customer owes.`);
  }

  const choice = (/** @type {string} */ value, /** @type {string} */ label, /** @type {string} */ hint) => html`<div class="choice">
    <input type="radio" name="direction" id=${`balance-${value}`} value=${value} checked=${direction === value}
      aria-describedby=${`balance-${value}-hint`} onChange=${() => setDirection(value)} />
    <label for=${`balance-${value}`}>${label}</label>
    <p class="hint" id=${`balance-${value}-hint`}>${hint}</p>
  </div>`;

  return html`<form class="stack" id="balance-form" novalidate aria-labelledby="customer-adjust" aria-busy=${busy ? 'true' : undefined} onSubmit=${submit}>
    <h2 id="customer-adjust">Adjust the balance</h2>
    ${error && !error.field ? html`<${FormMessage} message=${error.message} />` : null}
    <fieldset>
      <legend>Adjustment</legend>
      ${choice('credit', 'Credit the customer', 'The next invoices in this currency take the credit before anything is charged.')}
      ${choice('debit', 'Add to what the customer owes', 'The next invoice in this currency adds it to the amount due.')}
    </fieldset>
    <div class="inline-fields">
      <${Field} name="amount" label="Amount" hint="For example 12.50."
        error=${error && error.field === 'amount' ? error.message : null}
        control=${(/** @type {any} */ a) => html`<input type="text" required inputmode="decimal" autocomplete="off" ...${a}
          value=${amount} onInput=${(/** @type {any} */ e) => setAmount(e.currentTarget.value)} />`} />
      <${Field} name="currency" label="Currency" error=${error && error.field === 'currency' ? error.message : null}
        control=${(/** @type {any} */ a) => html`<select ...${a} value=${currency} onChange=${(/** @type {any} */ e) => setCurrency(e.currentTarget.value)}>
          ${currencies.map((c) => html`<option value=${c}>${c}</option>`)}
        </select>`} />
    </div>
    <${Field} name="description" label="Note (optional)" hint=${`Why, for your records; at most ${MAX_DESCRIPTION} characters.`}
      error=${error && error.field === 'description' ? error.message : null}
      control=${(/** @type {any} */ a) => html`<textarea rows="2" maxlength=${MAX_DESCRIPTION} ...${a}
        value=${description} onInput=${(/** @type {any} */ e) => setDescription(e.currentTarget.value)}></textarea>`} />
    <div><button type="submit" class="button button-primary" id="balance-submit" disabled=${busy}>Adjust balance</button></div>
  </form>`;
}
