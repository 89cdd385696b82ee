// @ts-check
// Preact pieces the stateful forms share, with the markup and behaviour of ui.js's field() and
// showFormError(): a labelled control with its hint and its error below, described by both; an
// error on the whole form on top, announced and focused.
import { html, useEffect, useMemo, useRef } from './preact.js';
import { id as newID } from './dom.js';
import { errorText } from './ui.js';

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
