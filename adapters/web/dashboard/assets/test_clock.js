// @ts-check
// The advance control of the test-mode header: a button that opens a modal dialog to move the
// test clock forward by an hour, a day, a week or 30 days (POST /api/v1/test/test_clock/advance,
// the merchant API's advance). Everything due up to the new time happens first (expiries,
// settlements, renewals, dunning), then the clock stays frozen at the target; the header and
// the page are read again afterwards. One Idempotency-Key per opening of the dialog (useIntent,
// renewed when it opens), so a double submit moves the clock once.
import { get, postOnce } from './api.js';
import { html, render, useRef, useState } from './preact.js';
import { useIntent } from './components.js';

const steps = [
  { seconds: 3600, label: '1 hour' },
  { seconds: 86400, label: '1 day' },
  { seconds: 7 * 86400, label: '7 days' },
  { seconds: 30 * 86400, label: '30 days' },
];

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => { setTimeout(r, ms); });

/**
 * @param {{ onAdvanced: () => Promise<void> }} props
 */
function AdvanceControl({ onAdvanced }) {
  const dialog = useRef(/** @type {HTMLDialogElement | null} */ (null));
  const opener = useRef(/** @type {HTMLButtonElement | null} */ (null));
  const [seconds, setSeconds] = useState(86400);
  const { busy, error, run, renew } = useIntent({ reload: onAdvanced }, []);

  function open() {
    renew();
    if (dialog.current) {
      dialog.current.showModal();
      const checked = dialog.current.querySelector('input:checked');
      if (checked instanceof HTMLElement) checked.focus();
    }
  }
  function close() {
    if (dialog.current && dialog.current.open) dialog.current.close();
  }

  /** @param {SubmitEvent} ev */
  function submit(ev) {
    ev.preventDefault();
    run(async (key) => {
      let c = await postOnce('/test/test_clock/advance', { seconds }, key);
      // 202: the due work goes on; wait for it (the header says so meanwhile).
      if (c.status === 'advancing') onAdvanced();
      while (c.status === 'advancing') {
        await sleep(1500);
        c = await get('/test/test_clock');
      }
      close();
    }, 'The test clock moved forward; everything due until then has happened.');
  }

  return html`<span class="clock-control">
    <button type="button" class="button button-small" id="test-clock-advance" ref=${opener} onClick=${open}>Advance the test clock</button>
    <dialog class="clock-dialog" aria-labelledby="clock-dialog-title" ref=${dialog} onClose=${() => { if (opener.current) opener.current.focus(); }}>
      <form class="stack" id="clock-advance-form" aria-busy=${busy ? 'true' : undefined} onSubmit=${submit}>
        <h2 id="clock-dialog-title">Advance the test clock</h2>
        <p>Everything due until then happens first, in time order: checkout sessions expire, payments settle, subscriptions renew and invoices are chased. Then the clock stays frozen at the new time; test data is dated by it. Live mode always runs on real time.</p>
        ${error ? html`<div class="notice notice-error" role="alert">${error.message}</div>` : null}
        <fieldset>
          <legend>Move it forward by</legend>
          ${steps.map((s) => html`<label class="choice"><input type="radio" name="advance-by" value=${String(s.seconds)}
            checked=${seconds === s.seconds} onChange=${() => setSeconds(s.seconds)} /> ${s.label}</label>`)}
        </fieldset>
        <div class="actions">
          <button type="button" class="button" onClick=${close} disabled=${busy}>Cancel</button>
          <button type="submit" class="button button-primary" data-advance="" disabled=${busy}>${busy ? 'Advancing…' : 'Advance'}</button>
        </div>
      </form>
    </dialog>
  </span>`;
}

/**
 * mountClockControl renders the advance control into slot.
 * @param {HTMLElement} slot
 * @param {() => Promise<void>} onAdvanced runs when the clock moved (or started moving); resolves when the page is drawn again
 */
export function mountClockControl(slot, onAdvanced) {
  render(html`<${AdvanceControl} onAdvanced=${onAdvanced} />`, slot);
}
