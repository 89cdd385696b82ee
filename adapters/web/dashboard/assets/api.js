// @ts-check
// The dashboard JSON API client (openapi/dashboard.yaml, same origin, under /api/v1). get, post,
// del and postOnce are typed by the spec (types.d.ts): tsc (make lint-dashboard) checks that the
// path a page asks for exists with that method and gives the page the answer's shape. The session
// cookie travels by itself; the CSRF token is kept in memory only (never in storage) and sent as
// X-CSRF-Token on every unsafe method. A 401 means the session is gone: the page sends the
// person to /login and comes back here afterwards.

let csrfToken = null;

export function setCSRFToken(token) {
  csrfToken = token || null;
}

// APIError carries the error envelope of the API: type, code, param, message, and for 429 the
// Retry-After seconds.
export class APIError extends Error {
  constructor(status, body, headers, fallback) {
    const e = (body && body.error) || {};
    super(e.message || fallback || `The server answered ${status}.`);
    this.status = status;
    this.type = e.type || '';
    this.code = e.code || '';
    this.param = e.param || null;
    this.requestId = e.request_id || (headers && headers.get('Request-Id')) || '';
    const retry = headers && Number(headers.get('Retry-After'));
    this.retryAfter = Number.isFinite(retry) && retry > 0 ? retry : null;
  }
}

const unsafe = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

// loginURL is the sign-in page that brings the person back to where they were.
export function loginURL() {
  const here = location.pathname + location.search;
  return here.startsWith('/login') ? '/login' : `/login?next=${encodeURIComponent(here)}`;
}

// request sends method path (below /api/v1) with an optional JSON body and returns the decoded
// answer (null for 204). Options: auth401 false keeps a 401 as an error instead of leaving for
// /login (the sign-in form uses it).
/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {{ auth401?: boolean, retried?: boolean, idempotencyKey?: string }} [opts]
 * @returns {Promise<any>}
 */
export async function request(method, path, body, { auth401 = true, retried = false, idempotencyKey = '' } = {}) {
  const headers = { Accept: 'application/json' };
  if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
  /** @type {RequestInit} */
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  if (unsafe.has(method) && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  let resp;
  try {
    resp = await fetch(`/api/v1${path}`, init);
  } catch {
    throw new APIError(0, null, null, 'The dashboard could not reach the server. Check the connection and try again.');
  }
  if (resp.status === 204) return null;
  let data = null;
  try {
    data = await resp.json();
  } catch {
    data = null;
  }
  if (resp.ok) return data;
  const err = new APIError(resp.status, data, resp.headers);
  if (resp.status === 401 && auth401) {
    location.assign(loginURL());
    // Keep the page as it is while the browser leaves.
    return new Promise(() => {});
  }
  // A token that no longer matches (a new sign-in in another tab) is refreshed once.
  if (resp.status === 403 && err.code === 'csrf_token_invalid' && !retried && unsafe.has(method)) {
    const s = await request('GET', '/session');
    setCSRFToken(s && s.csrf_token);
    return request(method, path, body, { auth401, retried: true, idempotencyKey });
  }
  throw err;
}

/**
 * get reads path (below /api/v1, a GET of the spec) and resolves to its answer.
 * @template {import('./types').Path<'get'>} P
 * @param {P} path
 * @returns {Promise<import('./types').Answer<P, 'get'>>}
 */
export function get(path) {
  return request('GET', path);
}

/**
 * post sends body to path (a POST of the spec) and resolves to its answer.
 * @template {import('./types').Path<'post'>} P
 * @param {P} path
 * @param {import('./types').Body<P, 'post'>} [body]
 * @returns {Promise<import('./types').Answer<P, 'post'>>}
 */
export function post(path, body) {
  return request('POST', path, body);
}

/**
 * del deletes path (a DELETE of the spec).
 * @template {import('./types').Path<'delete'>} P
 * @param {P} path
 * @returns {Promise<import('./types').Answer<P, 'delete'>>}
 */
export function del(path) {
  return request('DELETE', path);
}

/**
 * postOnce is post with an Idempotency-Key: sent again with the same key (a double click, a
 * retry after a lost answer) it makes the change once and answers the first answer again.
 * @template {import('./types').Path<'post'>} P
 * @param {P} path
 * @param {import('./types').Body<P, 'post'>} body
 * @param {string} key
 * @returns {Promise<import('./types').Answer<P, 'post'>>}
 */
export function postOnce(path, body, key) {
  return request('POST', path, body, { idempotencyKey: key });
}

// newKey returns a fresh random Idempotency-Key.
export function newKey() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return `dash-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * query builds "?a=b&c=d" from an object, leaving out empty values.
 * @param {Record<string, string | number | boolean | null | undefined>} params
 * @returns {'' | `?${string}`}
 */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}
