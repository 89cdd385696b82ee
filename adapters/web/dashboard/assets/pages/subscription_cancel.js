// @ts-check
// The cancel form of a subscription's page, a Preact component: cancel at the end of the
// period (the default) or now, and resume a pending cancellation. One Idempotency-Key per
// intent, so a double click or a retry after a lost answer changes the subscription once; a
// new key after each answer.
import { postOnce } from '../api.js';
import { html, useState } from '../preact.js';
import { FormMessage, useIntent } from '../components.js';

/**
 * @param {{ ctx: import('../types').Ctx, sub: import('../types').Schemas['Subscription'] }} props
 */
export function CancelForm({ ctx, sub }) {
  const [when, setWhen] = useState(sub.cancel_at_period_end ? 'now' : 'period_end');
  const { busy, error, run } = useIntent(ctx, []);
  const path = /** @type {const} */ (`${ctx.base}/subscriptions/${encodeURIComponent(sub.id)}`);
  const pending = sub.cancel_at_period_end;

  /** @param {SubmitEvent} ev */
  function submit(ev) {
    ev.preventDefault();
    const atPeriodEnd = when === 'period_end';
    run((key) => postOnce(`${path}/cancel`, { at_period_end: atPeriodEnd }, key),
      atPeriodEnd ? 'The subscription ends at the end of its period.' : 'The subscription is canceled.');
  }

  function resume() {
    run((key) => postOnce(`${path}/resume`, undefined, key), 'The subscription renews again.');
  }

  const choice = (/** @type {string} */ value, /** @type {string} */ label, /** @type {string} */ hint) => html`<div class="choice">
    <input type="radio" name="when" id=${`cancel-${value}`} value=${value} checked=${when === value}
      aria-describedby=${`cancel-${value}-hint`} onChange=${() => setWhen(value)} />
    <label for=${`cancel-${value}`}>${label}</label>
    <p class="hint" id=${`cancel-${value}-hint`}>${hint}</p>
  </div>`;

  return html`<form class="stack" id="cancel-form" novalidate aria-busy=${busy ? 'true' : undefined} onSubmit=${submit}>
    <h2 id="sub-cancel">${pending ? 'Pending cancellation' : 'Cancel'}</h2>
    ${error ? html`<${FormMessage} message=${error.message} />` : null}
    ${pending
      ? html`<p>It ends at the end of the current period unless you resume it.</p>
        <div class="actions"><button type="button" class="button button-primary" id="resume" disabled=${busy} onClick=${resume}>Resume subscription</button></div>`
      : null}
    <fieldset>
      <legend>When should it end?</legend>
      ${pending ? null : choice('period_end', 'At the end of the current period', 'It keeps its status until then; no further invoice is made.')}
      ${choice('now', 'Now', 'It ends at once; open invoices are voided.')}
    </fieldset>
    <div><button type="submit" class="button button-danger" id="cancel-submit" disabled=${busy}>Cancel subscription</button></div>
  </form>`;
}
