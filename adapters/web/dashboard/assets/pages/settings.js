// @ts-check
// The merchant's settings: the prefix of its invoice numbers (<PREFIX>-INV-<year>-<sequence>).
// The prefix is the merchant's, so this page is the same in test and live mode. The rules
// (3 to 12 upper-case letters or digits) are the API's; the page shows its answer.
import { get, post } from '../api.js';
import { h } from '../dom.js';
import { when } from '../format.js';
import { busy, clearErrors, facts, field, flash, showFormError } from '../ui.js';
import { pageHead } from './common.js';

export async function list(ctx) {
  ctx.title('Settings');
  let s = await get('/settings');
  const summary = h('div', { id: 'settings-summary' });
  const draw = () => summary.replaceChildren(facts([
    ['Invoice number prefix', h('span', { class: 'mono', id: 'current-prefix' }, s.invoice_prefix)],
    ['Default prefix', h('span', { class: 'mono' }, s.default_invoice_prefix)],
    ['Next invoice (test mode)', h('span', { class: 'mono', id: 'next-number' }, s.next_invoice_number)],
    ['Last changed', when(s.updated, 'Never (the default applies)')],
  ]));
  draw();

  const form = h('form', { class: 'stack', id: 'settings-form', novalidate: true },
    field({
      label: 'Invoice number prefix', name: 'invoice_prefix', value: s.invoice_prefix, required: true,
      hint: '3 to 12 capital letters (A–Z) or digits. Invoices sent from now on use it, in test and live mode; invoices already sent keep their numbers, and the count of the year goes on.',
      attrs: { maxlength: 12, autocomplete: 'off', spellcheck: 'false', class: 'mono', autocapitalize: 'characters' },
    }),
    h('div', null, h('button', { type: 'submit', class: 'button button-primary' }, 'Save prefix')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearErrors(form);
    // Letters typed in lower case are meant as capitals; anything else goes to the API as typed.
    const prefix = form.elements.invoice_prefix.value.trim().toUpperCase();
    await busy(form, async () => {
      try {
        s = await post('/settings', { invoice_prefix: prefix });
        form.elements.invoice_prefix.value = s.invoice_prefix;
        draw();
        flash('ok', `Invoice numbers now start with ${s.invoice_prefix}. The next one is ${s.next_invoice_number}.`);
      } catch (err) {
        showFormError(form, err, 'invoice_prefix');
      }
    });
  });

  return h('div', null,
    pageHead('Settings'),
    h('section', { class: 'panel', 'aria-labelledby': 'invoice-numbers' },
      h('h2', { id: 'invoice-numbers' }, 'Invoice numbers'),
      h('p', { class: 'hint' }, 'Invoices are numbered PREFIX-INV-year-sequence; the sequence counts per environment and year.'),
      summary,
      form));
}
