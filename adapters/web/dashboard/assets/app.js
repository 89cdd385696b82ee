// @ts-check
// The signed-in dashboard: reads the session, draws the layout (merchant, test/live switch,
// TEST MODE banner, navigation, sign-out) and routes /{env}/{section}[/{id}] to a page module.
// Navigation stays in the page (history.pushState); every URL also loads directly, because the
// server serves this shell for every page path.
import { del, get, setCSRFToken } from './api.js';
import { h, replace } from './dom.js';
import { errorText, flash, notice } from './ui.js';
import { when } from './format.js';
import { mountClockControl } from './test_clock.js';
import * as overview from './pages/overview.js';
import * as payments from './pages/payments.js';
import * as refunds from './pages/refunds.js';
import * as disputes from './pages/disputes.js';
import * as balance from './pages/balance.js';
import * as payouts from './pages/payouts.js';
import * as sessions from './pages/sessions.js';
import * as apiKeys from './pages/api_keys.js';
import * as webhooks from './pages/webhooks.js';
import * as apps from './pages/apps.js';
import * as catalog from './pages/catalog.js';
import * as mailbox from './pages/mailbox.js';
import * as invoices from './pages/invoices.js';
import * as customers from './pages/customers.js';
import * as subscriptions from './pages/subscriptions.js';
import * as settings from './pages/settings.js';

/**
 * @typedef {object} Section
 * @property {string} name
 * @property {string} label
 * @property {{ list(ctx: import('./types').Ctx): Promise<Node>, detail?(ctx: import('./types').Ctx): Promise<Node> }} page
 * @property {boolean} [testOnly]
 */

// sections in navigation order; the server (handler.go) knows the same names.
/** @type {Section[]} */
const sections = [
  { name: 'overview', label: 'Overview', page: overview },
  { name: 'payments', label: 'Payments', page: payments },
  { name: 'refunds', label: 'Refunds', page: refunds },
  { name: 'disputes', label: 'Disputes', page: disputes },
  { name: 'balance', label: 'Balance', page: balance },
  { name: 'payouts', label: 'Payouts', page: payouts },
  { name: 'checkout_sessions', label: 'Checkout sessions', page: sessions },
  { name: 'api_keys', label: 'API keys', page: apiKeys },
  { name: 'webhooks', label: 'Webhooks', page: webhooks },
  { name: 'apps', label: 'Apps', page: apps },
  { name: 'catalog', label: 'Catalog', page: catalog },
  { name: 'customers', label: 'Customers', page: customers },
  { name: 'subscriptions', label: 'Subscriptions', page: subscriptions },
  { name: 'invoices', label: 'Invoices', page: invoices },
  { name: 'mailbox', label: 'Test mailbox', page: mailbox, testOnly: true },
  { name: 'settings', label: 'Settings', page: settings },
];

const app = document.getElementById('app');
let session = null;
let layoutEnv = null;
let routeSeq = 0;

/**
 * @param {string} pathname
 * @returns {{ env: 'test' | 'live', section: Section, id: string | null } | null}
 */
function parsePath(pathname) {
  const m = /^\/(test|live)\/([a-z_]+)(?:\/([A-Za-z0-9_]+))?\/?$/.exec(pathname);
  if (!m) return null;
  const section = sections.find((s) => s.name === m[2]);
  if (!section || (section.testOnly && m[1] !== 'test')) return null;
  if (m[3] && !section.page.detail) return null;
  return { env: m[1] === 'live' ? 'live' : 'test', section, id: m[3] || null };
}

// navigate moves to an in-app URL without reloading the page.
export function navigate(url, { replaceState = false } = {}) {
  if (replaceState) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  route({ focus: true });
}

function envSwitch(env, section) {
  const target = (e) => {
    const s = section.testOnly && e !== 'test' ? 'overview' : section.name;
    return `/${e}/${s}`;
  };
  return h('nav', { class: 'env-switch', 'aria-label': 'Environment' },
    ['test', 'live'].map((e) => h('a', {
      href: target(e), class: `env-${e}`, 'data-env': e, 'aria-current': e === env ? 'true' : null,
    }, e === 'test' ? 'Test' : 'Live')));
}

// envBanner says which environment the pages show: test mode (amber) moves no real money and
// carries the test clock's line; live mode (dark) moves real money.
function envBanner(env) {
  const m = session.merchant;
  if (env === 'test') {
    return h('div', { class: 'k-test-banner', id: 'env-banner', role: 'note' },
      h('strong', null, 'TEST MODE'), ' — test data only; no real money moves. ',
      h('span', { id: 'test-clock-control' }),
      h('span', { class: 'test-clock', id: 'test-clock', hidden: true }));
  }
  return h('div', { class: 'k-live-banner', id: 'env-banner', role: 'note' },
    h('strong', null, 'LIVE MODE'), ' — real money. ',
    m.onboarded
      ? 'No live processor adapter is configured on this server, so live payments are refused (503 processor_unavailable); test mode takes sandbox payments.'
      : 'This merchant is not activated yet; live payments are refused until onboarding completes.');
}

// showTestClock reads the test clock and, once it has been advanced (it then stays frozen at
// that time for good), says so in the test-mode header: every test object is dated by it.
async function showTestClock() {
  const slot = document.getElementById('test-clock');
  if (!slot) return;
  let c;
  try {
    c = await get('/test/test_clock');
  } catch {
    return; // the header stays as it is; the page itself reports API errors
  }
  if (!slot.isConnected) return;
  if (c.status === 'advancing' && c.advancing_to !== null && c.advancing_to !== undefined) {
    replace(slot, 'Test clock advancing to ', when(c.advancing_to, '—', true),
      ' — due work (expiries, settlements, disputes) is running in time order; test data stays dated ',
      c.frozen_time === null || c.frozen_time === undefined ? 'by real time' : ['at ', when(c.frozen_time, '—', true)],
      ' until it is done.');
    slot.hidden = false;
    return;
  }
  if (c.frozen_time === null || c.frozen_time === undefined) {
    slot.hidden = true;
    slot.textContent = '';
    return;
  }
  replace(slot, 'Test clock frozen at ', when(c.frozen_time, '—', true),
    ' — test data is dated by this clock; it moves only when you advance it again.');
  slot.hidden = false;
}

function drawLayout(env, section) {
  const m = session.merchant;
  const signOut = h('button', { type: 'button', class: 'button button-small', id: 'sign-out', onclick: doSignOut }, 'Sign out');
  replace(app,
    h('header', { class: 'app-header' },
      h('div', { class: 'topbar' },
        h('p', { class: 'k-brand' }, 'Kassa'),
        h('p', { class: 'merchant-name', id: 'merchant-name' }, m.name),
        h('span', { class: 'spacer' }),
        h('span', { id: 'env-switch-slot' }, envSwitch(env, section)),
        h('span', { class: 'user-email' }, session.user.email),
        signOut),
      envBanner(env)),
    h('div', { class: 'shell' },
      h('nav', { class: 'sidenav', 'aria-label': 'Main' },
        h('ul', null, sections.filter((s) => !s.testOnly || env === 'test').map((s) => h('li', null,
          h('a', { href: `/${env}/${s.name}`, 'data-section': s.name }, s.label))))),
      h('main', { class: 'content', id: 'main', tabindex: '-1' })));
  const clockSlot = document.getElementById('test-clock-control');
  // After an advance the header's clock and the page (its data dated by the clock) are read again.
  if (clockSlot) mountClockControl(clockSlot, () => { showTestClock(); return route({ focus: false }); });
  layoutEnv = env;
}

function markCurrent(env, section) {
  replace(document.getElementById('env-switch-slot'), envSwitch(env, section));
  for (const a of app.querySelectorAll('.sidenav a[data-section]')) {
    if (!(a instanceof HTMLElement)) continue;
    if (a.dataset.section === section.name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

async function doSignOut(ev) {
  ev.currentTarget.disabled = true;
  try {
    await del('/session');
  } catch (err) {
    if (err.status !== 401) {
      ev.currentTarget.disabled = false;
      flash('error', `Signing out failed: ${errorText(err)}`);
      return;
    }
  }
  setCSRFToken(null);
  location.assign('/login');
}

function notFoundView() {
  document.title = 'Page not found · Kassa';
  return h('div', null, h('h1', null, 'Page not found'),
    h('p', null, 'There is no dashboard page at this address. ', h('a', { href: '/test/overview' }, 'Go to the overview'), '.'));
}

async function route({ focus = false } = {}) {
  const seq = ++routeSeq;
  const where = parsePath(location.pathname);
  const env = where ? where.env : (layoutEnv || 'test');
  const section = where ? where.section : sections[0];
  if (layoutEnv !== env) drawLayout(env, section);
  markCurrent(env, section);
  // The clock can move between two pages (an advance through the merchant API): read it on
  // every page of test mode.
  if (env === 'test') showTestClock();
  const main = document.getElementById('main');
  if (!where) {
    replace(main, notFoundView());
    return;
  }
  const query = new URLSearchParams(location.search);
  /** @type {import('./types').Ctx} */
  const ctx = {
    env, id: where.id, query, session,
    base: env === 'test' ? '/test' : '/live',
    alive: () => seq === routeSeq,
    // href is this page's path with the query params replaced by params (null drops one).
    href: (params) => {
      const q = new URLSearchParams(location.search);
      for (const [k, v] of Object.entries(params)) {
        if (v === null || v === undefined || v === '') q.delete(k); else q.set(k, v);
      }
      const s = q.toString();
      return location.pathname + (s ? `?${s}` : '');
    },
    navigate,
    reload: () => route({ focus: false }),
    title: (t) => { document.title = `${t} · ${env === 'test' ? 'Test · ' : ''}Kassa`; },
  };
  main.setAttribute('aria-busy', 'true');
  replace(main, h('p', { class: 'loading' }, 'Loading…'));
  let view;
  try {
    view = await (where.id ? where.section.page.detail(ctx) : where.section.page.list(ctx));
  } catch (err) {
    view = h('div', null, h('h1', null, 'Something went wrong'), notice('error', errorText(err)));
  }
  if (!ctx.alive()) return;
  replace(main, view);
  main.removeAttribute('aria-busy');
  if (focus) {
    const h1 = main.querySelector('h1');
    (h1 || main).setAttribute('tabindex', '-1');
    (h1 || main).focus();
  }
}

// Links to dashboard pages stay in the app; downloads, other origins, /api/ and /login do not.
document.addEventListener('click', (ev) => {
  if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  const a = ev.target instanceof Element ? ev.target.closest('a[href]') : null;
  if (!(a instanceof HTMLAnchorElement)) return;
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !parsePath(url.pathname)) return;
  ev.preventDefault();
  if (url.pathname + url.search !== location.pathname + location.search) navigate(url.pathname + url.search);
});
window.addEventListener('popstate', () => route({ focus: true }));

async function start() {
  session = await get('/session');
  setCSRFToken(session.csrf_token);
  app.removeAttribute('aria-busy');
  await route();
}

start().catch((err) => {
  app.removeAttribute('aria-busy');
  replace(app, h('main', { class: 'login-card', id: 'main' }, h('h1', null, 'The dashboard could not start'), notice('error', errorText(err))));
});
