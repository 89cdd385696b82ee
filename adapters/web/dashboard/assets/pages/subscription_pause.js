// @ts-check
// The pause form of a subscription's page, a Preact component: pause its billing, until a day
// or until resumed, and resume it. The server decides everything (which statuses can pause,
// that the day is in the future); one Idempotency-Key per intent, a new one after each answer.
import { postOnce } from '../api.js';
import { html, useState } from '../preact.js';
import { Field, FormMessage, useIntent } from '../components.js';

const dayFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });

/**
 * @param {{ ctx: import('../types').Ctx, sub: import('../types').Schemas['Subscription'] }} props
 */
export function PauseForm({ ctx, sub }) {
  const [day, setDay] = useState('');
  const { busy, error, run } = useIntent(ctx, ['resumes_at']);
  const path = /** @type {const} */ (`${ctx.base}/subscriptions/${encodeURIComponent(sub.id)}`);
  const paused = sub.pause_collection;

  /** @param {SubmitEvent} ev */
  function submit(ev) {
    ev.preventDefault();
    if (paused) {
      run((key) => postOnce(`${path}/unpause`, undefined, key), 'Billing resumes at the end of the current period.');
      return;
    }
    // The chosen day at 00:00 UTC, the time the period dates on this page are read in.
    const body = day ? { resumes_at: Math.floor(Date.parse(`${day}T00:00:00Z`) / 1000) } : {};
    run((key) => postOnce(`${path}/pause`, body, key),
      day ? `Billing is paused until ${dayFormat.format(new Date(`${day}T00:00:00Z`))}.` : 'Billing is paused until you resume it.');
  }

  const until = paused && paused.resumes_at ? dayFormat.format(new Date(paused.resumes_at * 1000)) : null;
  return html`<form class="stack" id="pause-form" novalidate aria-busy=${busy ? 'true' : undefined} onSubmit=${submit}>
    <h2 id="sub-pause">${paused ? 'Billing paused' : 'Pause billing'}</h2>
    ${error && error.field !== 'resumes_at' ? html`<${FormMessage} message=${error.message} />` : null}
    ${paused
      ? html`<p id="pause-state">No invoices are made ${until ? `until ${until} (UTC), when billing resumes by itself` : 'until you resume it'}; the periods pass from the same anchor and are not billed later. It adds nothing to the monthly recurring revenue.</p>`
      : html`<p class="hint">While paused the subscription keeps its status and makes no invoices; the paused periods are not billed later.</p>
        <${Field} name="resumes_at" label="Resume on (optional)" hint="A day in the future (UTC); leave empty to pause until you resume it."
          error=${error && error.field === 'resumes_at' ? error.message : null}
          control=${(/** @type {Record<string, any>} */ a) => html`<input ...${a} type="date" value=${day} onInput=${(/** @type {InputEvent} */ e) => setDay(/** @type {HTMLInputElement} */ (e.target).value)} />`} />`}
    <div><button type="submit" class="button" id=${paused ? 'unpause-submit' : 'pause-submit'} disabled=${busy}>${paused ? 'Resume billing' : 'Pause billing'}</button></div>
  </form>`;
}
