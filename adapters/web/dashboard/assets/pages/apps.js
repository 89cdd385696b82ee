// @ts-check
// The apps installed on the merchant: what each may read (in the consent page's words), when
// it was installed and last used, and uninstalling after a confirmation. One installation serves both
// environments, so this page is the same in test and live mode.
import { del, get } from '../api.js';
import { h } from '../dom.js';
import { when } from '../format.js';
import { confirmAction, errorText, flash, table } from '../ui.js';
import { pageHead } from './common.js';

/** @param {import('../types').Ctx} ctx */
export async function list(ctx) {
  ctx.title('Apps');
  const installed = (await get('/apps')).data || [];
  const t = table([
    { label: 'App', cell: (i) => i.app.name },
    { label: 'May read', cell: (i) => h('ul', { class: 'scopes' },
      i.scopes.map((s) => h('li', null, s.description || s.scope, ' ', h('small', { class: 'mono' }, `(${s.scope})`)))) },
    { label: 'Installed', cell: (i) => when(i.installed_at) },
    { label: 'Last used', cell: (i) => when(i.last_used, 'Never') },
    { label: 'Actions', cell: (i) => h('button', {
      type: 'button', class: 'button button-small button-danger', 'data-uninstall': i.id,
      'aria-label': `Uninstall ${i.app.name}`,
      onclick: async (ev) => {
        const ok = await confirmAction({
          title: `Uninstall "${i.app.name}"?`,
          body: 'The app loses access at once, in test and live mode. To use it again, install it anew.',
          confirm: 'Uninstall app', danger: true,
        });
        if (!ok) return;
        ev.target.disabled = true;
        try {
          await del(`/apps/${encodeURIComponent(i.id)}`);
          await ctx.reload();
          flash('ok', `"${i.app.name}" uninstalled.`);
        } catch (err) {
          ev.target.disabled = false;
          flash('error', `Uninstalling failed: ${errorText(err)}`);
        }
      },
    }, 'Uninstall') },
  ], installed, 'No apps installed.', 'Installed apps');
  t.id = 'apps';
  const sent = await Promise.all(installed.map((i) => recentDeliveries(i)));
  return h('div', null,
    pageHead('Apps'),
    h('p', { class: 'hint' }, 'Apps you installed read your data in test and live mode; they cannot change it.'),
    t,
    sent);
}

// recentDeliveries is the section of the events most recently sent to an installed app's
// webhook endpoints (test and live), newest first.
async function recentDeliveries(i) {
  const id = `deliveries-${i.id}`;
  let body;
  try {
    const rows = (await get(`/app_deliveries?installation=${encodeURIComponent(i.id)}`)).data || [];
    body = table([
      { label: 'Event', cell: (d) => h('span', { class: 'mono' }, d.event_type) },
      { label: 'Mode', cell: (d) => (d.environment === 'live' ? 'Live' : 'Test') },
      { label: 'Status', cell: (d) => d.status },
      { label: 'Attempts', num: true, cell: (d) => String(d.attempts) },
      { label: 'Last attempt', cell: (d) => when(d.last_attempt_at, 'Not yet') },
    ], rows, 'No events sent to this app yet.', `Recent events sent to ${i.app.name}`);
  } catch (err) {
    body = h('p', { class: 'empty' }, `Deliveries could not be loaded: ${errorText(err)}`);
  }
  return h('section', { class: 'app-deliveries', 'aria-labelledby': id, 'data-deliveries': i.id },
    h('h2', { id }, `Recent events sent to ${i.app.name}`), body);
}
