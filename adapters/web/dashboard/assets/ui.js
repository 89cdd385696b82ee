// @ts-check
// Shared pieces of the pages: notices, form error display, the confirm dialog, the
// secret-shown-once box, tables and pagers. All accessible by keyboard and screen reader:
// messages go to live regions, dialogs are modal <dialog>s that return focus, buttons are
// buttons.
import { h, id as newID, replace } from './dom.js';

// notice returns a message box; kind is "error", "ok", "warn" or "" (information). Errors are
// announced at once (role=alert), the rest politely (role=status).
export function notice(kind, ...text) {
  return h('div', { class: kind ? `notice notice-${kind}` : 'notice', role: kind === 'error' ? 'alert' : 'status' }, ...text);
}

// errorText is what a person reads for an API error.
export function errorText(err) {
  if (!err) return '';
  if (err.status === 429) {
    return err.retryAfter ? `${err.message} Try again in ${err.retryAfter} s.` : err.message;
  }
  if (err.status >= 500) return 'The server had a problem. Try again in a moment.';
  return err.message || String(err);
}

// flash shows a message in the page's message area (created on first use at the top of main).
export function flash(kind, ...text) {
  const main = document.getElementById('main');
  if (!main) return;
  let area = document.getElementById('flash');
  if (!area) {
    area = h('div', { id: 'flash' });
    main.prepend(area);
  }
  replace(area, notice(kind, ...text));
  area.scrollIntoView({ block: 'nearest' });
}

// field builds a labelled input. opts: label, name, type, value, hint, required, attrs (extra
// input attributes), control (a ready element instead of an input).
export function field(opts) {
  const inputID = newID(`f-${opts.name}`);
  const hintID = opts.hint ? `${inputID}-hint` : null;
  const errorID = `${inputID}-error`;
  const control = opts.control || h('input', {
    type: opts.type || 'text', name: opts.name, value: opts.value ?? null, required: !!opts.required, ...(opts.attrs || {}),
  });
  control.id = inputID;
  control.name = control.name || opts.name;
  const described = [hintID, errorID].filter(Boolean).join(' ');
  control.setAttribute('aria-describedby', described);
  return h('div', { class: 'field', 'data-field': opts.name },
    h('label', { for: inputID }, opts.label),
    control,
    opts.hint ? h('p', { class: 'hint', id: hintID }, opts.hint) : null,
    h('p', { class: 'field-error', id: errorID, hidden: true }));
}

// clearErrors removes the messages showFormError added.
export function clearErrors(form) {
  for (const el of form.querySelectorAll('[aria-invalid="true"]')) el.removeAttribute('aria-invalid');
  for (const el of form.querySelectorAll('.field-error')) { el.textContent = ''; el.hidden = true; }
  const top = form.querySelector(':scope > .form-message');
  if (top) top.remove();
}

// showFormError puts an API error next to the field its param names (the last dotted part,
// e.g. "price.unit_amount" → unit_amount), or on top of the form, and moves focus there.
export function showFormError(form, err, fallbackField) {
  clearErrors(form);
  const message = typeof err === 'string' ? err : errorText(err);
  const param = typeof err === 'string' ? fallbackField : (err.param || fallbackField);
  const name = param ? String(param).split('.').pop() : null;
  const wrap = name && form.querySelector(`[data-field="${CSS.escape(name)}"]`);
  if (wrap) {
    const control = wrap.querySelector('input, select, textarea');
    const out = wrap.querySelector('.field-error');
    out.textContent = message;
    out.hidden = false;
    if (control) {
      control.setAttribute('aria-invalid', 'true');
      control.focus();
    }
    return;
  }
  const box = notice('error', message);
  box.classList.add('form-message');
  form.prepend(box);
  box.setAttribute('tabindex', '-1');
  box.focus();
}

// busy disables a form's buttons while fn runs, so a double click sends one request.
export async function busy(form, fn) {
  const buttons = [...form.querySelectorAll('button')];
  for (const b of buttons) b.disabled = true;
  form.setAttribute('aria-busy', 'true');
  try {
    return await fn();
  } finally {
    for (const b of buttons) b.disabled = false;
    form.removeAttribute('aria-busy');
  }
}

// confirmAction asks in a modal dialog and resolves true when the person confirms. Focus starts
// on Cancel (the safe choice) and returns to the element that had it.
export function confirmAction({ title, body, confirm = 'Confirm', danger = false }) {
  return new Promise((resolve) => {
    const back = /** @type {HTMLElement | null} */ (document.activeElement);
    const titleID = newID('dialog-title');
    const cancelBtn = h('button', { type: 'button', class: 'button', value: 'cancel' }, 'Cancel');
    const okBtn = h('button', { type: 'button', class: danger ? 'button button-danger' : 'button button-primary', 'data-confirm': '' }, confirm);
    const dialog = h('dialog', { 'aria-labelledby': titleID, class: 'confirm-dialog' },
      h('h2', { id: titleID }, title),
      body ? h('p', null, body) : null,
      h('div', { class: 'actions' }, cancelBtn, okBtn));
    let answer = false;
    const close = (v) => { answer = v; dialog.close(); };
    cancelBtn.addEventListener('click', () => close(false));
    okBtn.addEventListener('click', () => close(true));
    dialog.addEventListener('close', () => {
      dialog.remove();
      if (back && back.isConnected) back.focus();
      resolve(answer);
    });
    document.body.append(dialog);
    dialog.showModal();
    cancelBtn.focus();
  });
}

// secretBox shows a secret that the API returns once, with a copy button and the warning that it
// will not be shown again. onDone runs when the person dismisses it.
export function secretBox({ title, secret, what, onDone }) {
  const inputID = newID('secret');
  const status = h('span', { role: 'status', class: 'copy-status' });
  const input = h('input', { id: inputID, type: 'text', readonly: true, value: secret, class: 'secret-value', spellcheck: 'false', autocomplete: 'off' });
  const copy = h('button', {
    type: 'button', class: 'button', 'data-copy': '',
    onclick: async () => {
      input.select();
      try {
        await navigator.clipboard.writeText(secret);
      } catch {
        document.execCommand('copy');
      }
      status.textContent = 'Copied.';
    },
  }, 'Copy');
  const box = h('section', { class: 'secret-box', 'aria-labelledby': `${inputID}-title`, tabindex: '-1' },
    h('h2', { id: `${inputID}-title` }, title),
    h('p', { class: 'warning' }, `Copy ${what} now. This is the only time it is shown: Kassa keeps no readable copy, and it cannot be shown again.`),
    h('label', { for: inputID, class: 'visually-hidden' }, what),
    h('div', { class: 'secret-row' }, input, copy),
    status,
    h('p', null, h('button', {
      type: 'button', class: 'button button-primary',
      onclick: () => { box.remove(); if (onDone) onDone(); },
    }, 'I have saved it')));
  queueMicrotask(() => { box.focus(); input.select(); });
  return box;
}

// table renders rows (objects) with columns [{label, cell(row) → node|string, num}] and an
// empty message.
export function table(columns, rows, emptyText, caption) {
  if (!rows.length) return h('p', { class: 'empty' }, emptyText);
  return h('div', { class: 'table-wrap' },
    h('table', null,
      caption ? h('caption', { class: 'visually-hidden' }, caption) : null,
      h('thead', null, h('tr', null, columns.map((c) => h('th', { scope: 'col', class: c.num ? 'num' : null }, c.label)))),
      h('tbody', null, rows.map((r) => h('tr', { 'data-id': r.id || null },
        columns.map((c) => h('td', { class: c.num ? 'num' : null }, c.cell(r))))))));
}

// facts renders a definition list from [label, value] pairs, leaving out null values.
export function facts(pairs) {
  return h('dl', { class: 'facts' }, pairs.filter((p) => p && p[1] !== null && p[1] !== undefined)
    .map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}

// pager renders "Previous page" and "Next page" links for a cursor list (D8): next continues
// after the last row (starting_after), previous goes back before the first (ending_before).
// has_more tells whether more rows lie in the direction the page was fetched.
export function pager(ctx, list) {
  const after = ctx.query.get('starting_after');
  const before = ctx.query.get('ending_before');
  const rows = list.data || [];
  const links = [];
  const hasPrev = before ? list.has_more : !!after;
  const hasNext = before ? true : list.has_more;
  if (hasPrev && rows.length) {
    links.push(h('a', { href: ctx.href({ starting_after: null, ending_before: rows[0].id }), class: 'button', 'data-pager': 'previous', rel: 'prev' }, '← Previous page'));
  }
  if (hasNext && rows.length) {
    links.push(h('a', { href: ctx.href({ starting_after: rows[rows.length - 1].id, ending_before: null }), class: 'button', 'data-pager': 'next', rel: 'next' }, 'Next page →'));
  }
  return links.length ? h('nav', { class: 'pager', 'aria-label': 'Pages' }, links) : null;
}
