// @ts-check
// Preact pieces the stateful forms share, with the markup and behaviour of ui.js's field() and
// showFormError(): a labelled control with its hint and its error below, described by both; an
// error on the whole form on top, announced and focused; and the state of a form that posts one
// intent with an Idempotency-Key.
import { newKey } from './api.js';
import { html, useEffect, useMemo, useRef, useState } from './preact.js';
import { id as newID } from './dom.js';
import { errorText, flash } from './ui.js';

/**
 * @typedef {{ field: string | null, message: string }} FormError
 */

/**
 * formError turns an API error (or a message) into where it shows: the field its param names
 * (the last dotted part, "price.unit_amount" → unit_amount) when the form has that field, else
 * the top of the form.
 * @param {any} err
 * @param {string[]} fields the names of the form's fields
 * @param {string} [fallback] the field a param-less error belongs to
 * @returns {FormError}
 */
export function formError(err, fields, fallback) {
  const message = typeof err === 'string' ? err : errorText(err);
  const param = typeof err === 'string' ? fallback : (err.param || fallback);
  const name = param ? String(param).split('.').pop() : null;
  return { field: name && fields.includes(name) ? name : null, message };
}

/**
 * Field is a labelled control. control(attrs) renders the control (an input, select or
 * textarea) with the attributes Field gives it: id, name, aria-describedby, aria-invalid. With
 * error set, the control is marked invalid, the message shows below it, and it takes focus.
 * @param {{ name: string, label: string, hint?: string, error?: string | null, control: (attrs: Record<string, any>) => any }} props
 */
export function Field({ name, label, hint, error, control }) {
  const inputID = useMemo(() => newID(`f-${name}`), [name]);
  const wrap = useRef(/** @type {HTMLDivElement | null} */ (null));
  const hintID = hint ? `${inputID}-hint` : null;
  const errorID = `${inputID}-error`;
  useEffect(() => {
    if (!error || !wrap.current) return;
    const c = wrap.current.querySelector('input, select, textarea');
    if (c instanceof HTMLElement) c.focus();
  }, [error]);
  return html`<div class="field" data-field=${name} ref=${wrap}>
    <label for=${inputID}>${label}</label>
    ${control({ id: inputID, name, 'aria-describedby': [hintID, errorID].filter(Boolean).join(' '), 'aria-invalid': error ? 'true' : undefined })}
    ${hint ? html`<p class="hint" id=${hintID}>${hint}</p>` : null}
    <p class="field-error" id=${errorID} hidden=${!error}>${error || ''}</p>
  </div>`;
}

/**
 * FormMessage is an error about the whole form: announced at once and focused.
 * @param {{ message: string }} props
 */
export function FormMessage({ message }) {
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  useEffect(() => { if (box.current) box.current.focus(); }, [message]);
  return html`<div class="notice notice-error form-message" role="alert" tabindex="-1" ref=${box}>${message}</div>`;
}

/**
 * useIntent is the state of a form whose every submit is one intent sent with an
 * Idempotency-Key (a subscription's cancel and pause forms, a payment's refund form, the test
 * clock's advance): a double click or a retry after a lost answer changes things once.
 * run(send, done) calls send with the intent's key; on success the key is new, owner.reload()
 * draws the page again and done (a message, or one made from send's answer) is flashed; a
 * refusal (below 500) changed nothing, so the next try is a new request with a new key; an
 * error shows where formError puts it among fields (a param-less one under fallback, when
 * given). fail(err) shows a refusal found before anything was sent (the key stays); renew()
 * starts a new intent: a new key and no error shown.
 * @param {{ reload(): Promise<void> }} owner what draws the page again: a page's Ctx
 * @param {string[]} fields the names of the form's fields
 * @param {string} [fallback] the field a param-less error belongs to
 */
export function useIntent(owner, fields, fallback) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {FormError | null} */ (null));
  const key = useRef(newKey());

  /**
   * @template T
   * @param {(key: string) => Promise<T>} send
   * @param {string | ((answer: T) => string)} done
   */
  async function run(send, done) {
    setError(null);
    setBusy(true);
    try {
      const answer = await send(key.current);
      key.current = newKey();
      await owner.reload();
      flash('ok', typeof done === 'function' ? done(answer) : done);
    } catch (err) {
      if (err.status && err.status < 500) key.current = newKey();
      setError(formError(err, fields, fallback));
    } finally {
      setBusy(false);
    }
  }
  /** @param {any} err a message or an API error */
  function fail(err) {
    setError(formError(err, fields, fallback));
  }
  function renew() {
    key.current = newKey();
    setError(null);
  }
  return { busy, error, run, fail, renew };
}
