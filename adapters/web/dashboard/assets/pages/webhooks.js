// @ts-check
// Webhook endpoints of one environment: the list and the create form (URL + event types from
// GET /event_types; the signing secret is shown once), and per endpoint: edit URL, description
// and events, rotate the secret (new secret shown once), disable/enable, delete, send a test
// event, and the delivery log with every attempt (status, latency, response excerpt) and
// redelivery.
import { del, get, post, query } from '../api.js';
import { h, id as newID } from '../dom.js';
import { badge, when } from '../format.js';
import { busy, confirmAction, errorText, facts, field, flash, notice, secretBox, showFormError, table } from '../ui.js';
import { missing, pageHead } from './common.js';

let eventTypesCache = null;

async function eventTypes() {
  if (!eventTypesCache) {
    const r = await get('/event_types');
    eventTypesCache = (r.data || []).map((t) => (typeof t === 'string' ? { type: t } : t));
  }
  return eventTypesCache;
}

// eventPicker is a fieldset of checkboxes: "all events" (*) or a chosen list.
function eventPicker(types, selected) {
  const all = selected.includes('*');
  const legendID = newID('events');
  const allBox = h('input', { type: 'checkbox', name: 'all_events', value: '*', checked: all });
  const boxes = types.map((t) => h('input', {
    type: 'checkbox', name: 'enabled_events', value: t.type, checked: !all && selected.includes(t.type), disabled: all,
  }));
  allBox.addEventListener('change', () => { for (const b of boxes) b.disabled = allBox.checked; });
  const fs = h('fieldset', { class: 'field', 'data-field': 'enabled_events', 'aria-describedby': `${legendID}-error` },
    h('legend', { id: legendID }, 'Events to send'),
    h('label', { class: 'all-events' }, allBox, 'All events, including ones added later (*)'),
    h('div', { class: 'checks' }, types.map((t, i) => h('label', { title: t.description || null }, boxes[i], h('span', { class: 'mono' }, t.type)))),
    h('p', { class: 'field-error', id: `${legendID}-error`, hidden: true }));
  fs.selected = () => (allBox.checked ? ['*'] : boxes.filter((b) => b.checked).map((b) => b.value));
  return fs;
}

// secretLost says what is wrong when the server cannot open the endpoint's signing secret.
const secretLost = 'The signing secret of this endpoint cannot be opened: the server\'s webhook secret key ' +
  '(KASSA_WEBHOOK_SECRET_KEY) is missing or wrong. Nothing is sent to it until the operator restores the key; ' +
  'rotating the secret gives it a new one.';

function endpointStatus(e) {
  const st = e.status || (e.disabled ? 'disabled' : 'enabled');
  if (e.secret_unavailable) return h('span', null, badge(st), ' ', h('span', { class: 'hint', title: secretLost }, 'secret unavailable'));
  if (st !== 'disabled' || !e.disabled_reason) return badge(st);
  const why = { disabled_by_merchant: 'by you', endpoint_gone: 'answered 410 Gone', failing_too_long: 'failing for 5 days' }[e.disabled_reason] || e.disabled_reason;
  return h('span', null, badge(st), ' ', h('span', { class: 'hint' }, why));
}

function eventsSummary(list) {
  if (!list || !list.length) return '—';
  if (list.includes('*')) return 'All events';
  return list.length <= 3 ? list.join(', ') : `${list.slice(0, 3).join(', ')} and ${list.length - 3} more`;
}

/** @param {import('../types').Ctx} ctx */
export async function list(ctx) {
  ctx.title('Webhooks');
  const [eps, types] = await Promise.all([get(`${ctx.base}/webhook_endpoints`), eventTypes()]);
  const endpoints = eps.data || [];
  const secretSlot = h('div', { id: 'secret-slot' });
  const picker = eventPicker(types, []);
  const form = h('form', { class: 'stack', id: 'create-endpoint', novalidate: true },
    field({ label: 'Endpoint URL', name: 'url', type: 'url', required: true,
      hint: ctx.env === 'test' ? 'http:// is allowed in test mode, e.g. a local receiver (kassa listen).' : 'Live endpoints must use https://.',
      attrs: { placeholder: 'https://example.com/webhooks/kassa', autocomplete: 'url' } }),
    field({ label: 'Description (optional)', name: 'description', attrs: { maxlength: 500 } }),
    picker,
    h('div', null, h('button', { type: 'submit', class: 'button button-primary' }, 'Add endpoint')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = { url: form.elements.url.value.trim(), enabled_events: picker.selected() };
    const description = form.elements.description.value.trim();
    if (description) body.description = description;
    if (!body.url) return showFormError(form, 'Enter the URL that receives the events.', 'url');
    if (!body.enabled_events.length) return showFormError(form, 'Choose at least one event, or all events.', 'enabled_events');
    await busy(form, async () => {
      try {
        const ep = await post(`${ctx.base}/webhook_endpoints`, body);
        secretSlot.replaceChildren(secretBox({
          title: 'Endpoint added: its signing secret', secret: ep.secret, what: 'the signing secret (whsec_…)',
          onDone: () => ctx.navigate(`${ctx.base}/webhooks/${ep.id}`),
        }));
        form.reset();
        for (const b of form.querySelectorAll('input[type=checkbox]')) b.disabled = false;
      } catch (err) {
        showFormError(form, err, 'url');
      }
    });
  });
  return h('div', null,
    pageHead('Webhooks'),
    h('p', { class: 'hint' }, 'Kassa sends signed POST requests (Service-Signature) to these URLs when events happen.'),
    secretSlot,
    table([
      { label: 'URL', cell: (e) => h('a', { href: `${ctx.base}/webhooks/${e.id}`, 'data-endpoint': e.id }, e.url) },
      { label: 'Description', cell: (e) => e.description || '—' },
      { label: 'Events', cell: (e) => eventsSummary(e.enabled_events) },
      { label: 'Status', cell: endpointStatus },
      { label: 'Created', cell: (e) => when(e.created) },
    ], endpoints, 'No endpoints yet.', 'Webhook endpoints'),
    h('section', { class: 'panel', 'aria-labelledby': 'new-endpoint' }, h('h2', { id: 'new-endpoint' }, 'Add an endpoint'), form));
}

/** @param {import('../types').Ctx} ctx */
export async function detail(ctx) {
  ctx.title('Webhook endpoint');
  const back = h('a', { href: `${ctx.base}/webhooks` }, 'Back to webhooks');
  const path = /** @type {const} */ (`${ctx.base}/webhook_endpoints/${encodeURIComponent(ctx.id)}`);
  let ep;
  let types;
  try {
    [ep, types] = await Promise.all([get(path), eventTypes()]);
  } catch (err) {
    return missing(err, 'Endpoint', back);
  }
  ctx.title(ep.url);
  const secretSlot = h('div', { id: 'secret-slot' });
  const disabled = ep.status === 'disabled';

  const action = (label, attrs, fn) => h('button', {
    type: 'button', class: 'button', ...attrs,
    onclick: async (ev) => {
      const btn = ev.currentTarget;
      btn.disabled = true;
      try {
        await fn();
      } catch (err) {
        flash('error', `${label} failed: ${errorText(err)}`);
      } finally {
        btn.disabled = false;
      }
    },
  }, label);

  const rotate = action('Rotate secret', { 'data-action': 'rotate' }, async () => {
    const ok = await confirmAction({
      title: 'Rotate the signing secret?',
      body: 'A new secret is created and shown once. The current secret keeps signing deliveries for 24 hours, so you can deploy the new one without losing events.',
      confirm: 'Rotate secret',
    });
    if (!ok) return;
    const r = await post(`${path}/rotate_secret`);
    secretSlot.replaceChildren(secretBox({ title: 'New signing secret', secret: r.secret, what: 'the new signing secret (whsec_…)', onDone: () => ctx.reload() }));
  });
  const toggle = action(disabled ? 'Enable' : 'Disable', { 'data-action': disabled ? 'enable' : 'disable' }, async () => {
    await post(`${path}/${disabled ? 'enable' : 'disable'}`);
    await ctx.reload();
    flash('ok', disabled ? 'Endpoint enabled.' : 'Endpoint disabled: no events are sent to it until you enable it.');
  });
  const test = action('Send test event', { 'data-action': 'test' }, async () => {
    await post(`${path}/test`);
    await ctx.reload();
    flash('ok', 'Test event queued. Its delivery appears in the log below.');
  });
  const remove = action('Delete', { 'data-action': 'delete', class: 'button button-danger' }, async () => {
    const ok = await confirmAction({
      title: 'Delete this endpoint?', body: `${ep.url} will receive no more events. Its delivery log is deleted too.`,
      confirm: 'Delete endpoint', danger: true,
    });
    if (!ok) return;
    await del(path);
    ctx.navigate(`${ctx.base}/webhooks`);
  });

  const picker = eventPicker(types, ep.enabled_events || []);
  const form = h('form', { class: 'stack', id: 'edit-endpoint', novalidate: true },
    field({ label: 'Endpoint URL', name: 'url', type: 'url', value: ep.url, required: true }),
    field({ label: 'Description', name: 'description', value: ep.description || '', attrs: { maxlength: 500 } }),
    picker,
    h('div', null, h('button', { type: 'submit', class: 'button button-primary' }, 'Save changes')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = { url: form.elements.url.value.trim(), description: form.elements.description.value.trim(), enabled_events: picker.selected() };
    if (!body.enabled_events.length) return showFormError(form, 'Choose at least one event, or all events.', 'enabled_events');
    await busy(form, async () => {
      try {
        await post(path, body);
        await ctx.reload();
        flash('ok', 'Endpoint saved.');
      } catch (err) {
        showFormError(form, err, 'url');
      }
    });
  });

  const log = h('div', { id: 'delivery-log' });
  await loadDeliveries(ctx, log, null);

  return h('div', null,
    h('p', { class: 'breadcrumb' }, h('a', { href: `${ctx.base}/webhooks` }, 'Webhooks'), ' / ', h('span', { class: 'mono' }, ep.id)),
    pageHead(ep.url, test, rotate, toggle, remove),
    ep.secret_unavailable ? notice('error', secretLost) : null,
    secretSlot,
    h('section', { class: 'panel', 'aria-labelledby': 'ep-facts' },
      h('h2', { id: 'ep-facts' }, 'Endpoint'),
      facts([
        ['ID', h('span', { class: 'mono' }, ep.id)],
        ['Status', endpointStatus(ep)],
        ['Events', eventsSummary(ep.enabled_events)],
        ['Description', ep.description || null],
        ['Previous secret', ep.previous_secret_expires_at ? h('span', null, 'still signs until ', when(ep.previous_secret_expires_at)) : null],
        ['Failing since', ep.failing_since ? when(ep.failing_since) : null],
        ['Created', when(ep.created)],
      ])),
    h('section', { 'aria-labelledby': 'ep-log' }, h('h2', { id: 'ep-log' }, 'Delivery log'), log),
    h('section', { class: 'panel', 'aria-labelledby': 'ep-edit' }, h('h2', { id: 'ep-edit' }, 'Edit endpoint'), form));
}

// loadDeliveries fills el with a page of deliveries (newest first) and a "Load older" button.
/** @param {import('../types').Ctx} ctx */
async function loadDeliveries(ctx, el, after) {
  const page = await get(`${ctx.base}/webhook_endpoints/${encodeURIComponent(ctx.id)}/deliveries${query({ limit: 20, starting_after: after })}`);
  const rows = page.data || [];
  if (!after) el.replaceChildren();
  if (!after && !rows.length) {
    el.append(h('p', { class: 'empty' }, 'No deliveries yet. Send a test event, or cause one (e.g. complete a checkout session).'));
    return;
  }
  let tbody = el.querySelector('tbody');
  if (!tbody) {
    tbody = h('tbody');
    el.append(h('div', { class: 'table-wrap' }, h('table', { class: 'deliveries' },
      h('caption', { class: 'visually-hidden' }, 'Deliveries'),
      h('thead', null, h('tr', null, ['Event', 'Status', 'Attempts', 'Created', 'Next attempt'].map((t) => h('th', { scope: 'col' }, t)),
        h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Attempt log')))),
      tbody)));
  }
  for (const d of rows) tbody.append(...deliveryRows(ctx, d));
  const old = el.querySelector('.load-more');
  if (old) old.remove();
  if (page.has_more && rows.length) {
    const more = h('p', { class: 'load-more' }, h('button', {
      type: 'button', class: 'button',
      onclick: async (ev) => {
        ev.currentTarget.disabled = true;
        try {
          await loadDeliveries(ctx, el, rows[rows.length - 1].id);
        } catch (err) {
          flash('error', errorText(err));
          ev.currentTarget.disabled = false;
        }
      },
    }, 'Load older deliveries'));
    el.append(more);
  }
}

// deliveryRows is a delivery's row and a hidden row under it for its attempts.
/** @param {import('../types').Ctx} ctx */
function deliveryRows(ctx, d) {
  const detailCell = h('td', { colspan: 6 });
  const detailRow = h('tr', { class: 'row-detail', hidden: true, 'data-attempts-for': d.id }, detailCell);
  const toggle = h('button', {
    type: 'button', class: 'button button-small', 'aria-expanded': 'false', 'data-delivery': d.id,
    // The visible word is short; the name says which delivery (dozens of rows share the word).
    'aria-label': `Attempts of ${d.event_type} ${d.event_id}`,
    onclick: async () => {
      const open = toggle.getAttribute('aria-expanded') === 'true';
      if (open) {
        toggle.setAttribute('aria-expanded', 'false');
        toggle.textContent = 'Attempts';
        toggle.setAttribute('aria-label', `Attempts of ${d.event_type} ${d.event_id}`);
        detailRow.hidden = true;
        return;
      }
      toggle.setAttribute('aria-expanded', 'true');
      toggle.textContent = 'Hide attempts';
      toggle.setAttribute('aria-label', `Hide attempts of ${d.event_type} ${d.event_id}`);
      detailRow.hidden = false;
      await showAttempts(ctx, d.id, detailCell);
    },
  }, 'Attempts');
  return [
    h('tr', { 'data-id': d.id },
      h('td', null, h('span', { class: 'mono' }, d.event_type), h('br'), h('span', { class: 'mono hint' }, d.event_id)),
      h('td', null, badge(d.status)),
      h('td', { class: 'num' }, String(d.attempts ?? 0)),
      h('td', null, when(d.created, '—', true)),
      h('td', null, when(d.next_attempt_at)),
      h('td', null, toggle)),
    detailRow,
  ];
}

// codeBadge shows an attempt's HTTP status, green for 2xx (the only acknowledgement, D10).
function codeBadge(a) {
  if (!a.status_code) return badge(a.error ? 'failed' : 'pending');
  const b = h('span', { class: a.status_code >= 200 && a.status_code < 300 ? 'badge badge-delivered' : 'badge badge-failed' }, `HTTP ${a.status_code}`);
  return b;
}

/** @param {import('../types').Ctx} ctx */
async function showAttempts(ctx, deliveryID, cell) {
  cell.replaceChildren(h('p', { class: 'loading' }, 'Loading attempts…'));
  const path = /** @type {const} */ (`${ctx.base}/webhook_deliveries/${encodeURIComponent(deliveryID)}`);
  let d;
  try {
    d = await get(path);
  } catch (err) {
    cell.replaceChildren(notice('error', errorText(err)));
    return;
  }
  // The attempt log comes beside the delivery (whose own "attempts" is the count).
  const attempts = d.attempts || [];
  const redeliver = h('button', {
    type: 'button', class: 'button button-small', 'data-redeliver': deliveryID,
    onclick: async (ev) => {
      ev.currentTarget.disabled = true;
      try {
        await post(`${path}/redeliver`);
        flash('ok', 'Redelivery queued: a new attempt is sent now.');
        await new Promise((r) => setTimeout(r, 1000));
        await showAttempts(ctx, deliveryID, cell);
      } catch (err) {
        flash('error', `Redelivery failed: ${errorText(err)}`);
        ev.currentTarget.disabled = false;
      }
    },
  }, 'Redeliver now');
  cell.replaceChildren(
    table([
      { label: '#', num: true, cell: (a) => String(a.number) },
      { label: 'Sent', cell: (a) => when(a.started_at, '—', true) },
      { label: 'Response', cell: (a) => codeBadge(a) },
      { label: 'Latency', num: true, cell: (a) => (a.latency_ms !== null && a.latency_ms !== undefined ? `${a.latency_ms} ms` : '—') },
      { label: 'Response body / error', cell: (a) => (a.error ? h('span', { class: 'field-error' }, a.error) : h('code', { class: 'truncate', title: a.response_excerpt || '' }, a.response_excerpt || '')) },
    ], attempts, 'No attempt yet: the first one is on its way.', 'Attempts'),
    h('p', { class: 'attempts' }, redeliver));
}
