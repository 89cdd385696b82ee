// @ts-check
// API keys of one environment: create with a name (the secret is shown once), revoke after a
// confirmation, and see when each key was last used.
import { get, post } from '../api.js';
import { h } from '../dom.js';
import { badge, when } from '../format.js';
import { busy, confirmAction, errorText, field, flash, secretBox, showFormError, table } from '../ui.js';
import { pageHead } from './common.js';

/** @param {import('../types').Ctx} ctx */
export async function list(ctx) {
  ctx.title('API keys');
  const keys = (await get(`${ctx.base}/api_keys`)).data || [];
  const secretSlot = h('div', { id: 'secret-slot' });

  const form = h('form', { class: 'stack', id: 'create-key', novalidate: true },
    field({ label: 'Name', name: 'name', hint: 'What the key is for, e.g. "Web shop backend".', required: true, attrs: { maxlength: 100, autocomplete: 'off' } }),
    h('p', { class: 'hint' }, `The key will be a ${ctx.env} key (sk_${ctx.env}_…). Switch the environment at the top to create the other kind.`),
    h('div', null, h('button', { type: 'submit', class: 'button button-primary' }, `Create ${ctx.env} key`)));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const name = form.elements.name.value.trim();
    if (!name) {
      showFormError(form, 'Give the key a name.', 'name');
      return;
    }
    await busy(form, async () => {
      try {
        const key = await post(`${ctx.base}/api_keys`, { name });
        form.reset();
        const { secret, ...shown } = key;
        const box = secretBox({ title: `Key "${key.name}" created`, secret, what: 'the secret key', onDone: () => ctx.reload() });
        secretSlot.replaceChildren(box);
        keys.unshift(shown);
        tableSlot.replaceChildren(keyTable(ctx, keys));
      } catch (err) {
        showFormError(form, err, 'name');
      }
    });
  });

  const tableSlot = h('div', null, keyTable(ctx, keys));
  return h('div', null,
    pageHead('API keys'),
    secretSlot,
    h('section', { class: 'panel', 'aria-labelledby': 'new-key' }, h('h2', { id: 'new-key' }, 'Create a secret key'), form),
    h('h2', null, `${ctx.env === 'test' ? 'Test' : 'Live'} keys`),
    tableSlot);
}

/** @param {import('../types').Ctx} ctx */
function keyTable(ctx, keys) {
  const t = table([
    { label: 'Name', cell: (k) => k.name || '—' },
    { label: 'Key', cell: (k) => h('span', { class: 'mono' }, keyHint(k)) },
    { label: 'Mode', cell: (k) => k.mode },
    { label: 'Created', cell: (k) => when(k.created) },
    { label: 'Last used', cell: (k) => when(k.last_used, 'Never') },
    { label: 'Status', cell: (k) => (k.revoked_at ? h('span', null, badge('revoked'), ' ', when(k.revoked_at)) : badge('active')) },
    { label: 'Actions', cell: (k) => (k.revoked_at ? '' : h('button', {
      type: 'button', class: 'button button-small button-danger', 'data-revoke': k.id,
      'aria-label': `Revoke key ${k.name || keyHint(k)}`,
      onclick: async (ev) => {
        const ok = await confirmAction({
          title: `Revoke "${k.name || keyHint(k)}"?`,
          body: 'Requests with this key will be refused at once. This cannot be undone.',
          confirm: 'Revoke key', danger: true,
        });
        if (!ok) return;
        ev.target.disabled = true;
        try {
          await post(`${ctx.base}/api_keys/${encodeURIComponent(k.id)}/revoke`);
          await ctx.reload();
          flash('ok', `Key "${k.name || keyHint(k)}" revoked.`);
        } catch (err) {
          ev.target.disabled = false;
          flash('error', `Revoking failed: ${errorText(err)}`);
        }
      },
    }, 'Revoke')) },
  ], keys, `No ${ctx.env} keys.`, 'API keys');
  t.classList.add('keys');
  return t;
}

function keyHint(k) {
  if (k.display) return k.display;
  if (k.prefix && k.last4) return `${k.prefix}…${k.last4}`;
  if (k.last4) return `…${k.last4}`;
  return k.prefix || k.id;
}
