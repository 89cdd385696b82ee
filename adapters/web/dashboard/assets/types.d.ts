// Types the pages are checked with (`make lint-dashboard`: tsc --noEmit, config in
// tools/dashboard-types/tsconfig.json). Not served: the browser never sees a .d.ts.
//
// The dashboard JSON API's shapes come from openapi/gen/dashboard.d.ts, which `make generate`
// writes from openapi/dashboard.yaml. api.js's get/post/del take a path below /api/v1 and are
// typed by it: `get(`${ctx.base}/invoices/${id}`)` only compiles when the spec has a GET for
// /{env}/invoices/{id}, and it resolves to that operation's answer (Invoice). A page that asks
// for a path or a field the spec does not have fails the lint.
import type { components, paths } from '../../../../openapi/gen/dashboard';

export type Schemas = components['schemas'];
export type Invoice = Schemas['Invoice'];
export type Payment = Schemas['Payment'];
export type Refund = Schemas['Refund'];

type Spec = paths;
type Method = 'get' | 'post' | 'delete' | 'put' | 'patch';

// Fill turns "/{env}/invoices/{id}" into `/${string}/invoices/${string}`.
type Fill<S extends string> = S extends `${infer A}{${string}}${infer B}` ? `${A}${string}${Fill<B>}` : S;
// Below is a spec path without its /api/v1 prefix; the client adds it.
type Below<K> = K extends `/api/v1${infer R}` ? R : never;
// URL is what a page may pass for spec path K: the path filled in, with or without a query.
type URL<K> = Fill<Below<K>> | `${Fill<Below<K>>}?${string}`;

type Op<K extends keyof Spec, M extends Method> = NonNullable<Spec[K][M]>;
// With are the spec paths that have method M.
type With<M extends Method> = { [K in keyof Spec]: [Op<K, M>] extends [never] ? never : K }[keyof Spec];
// Matches are the spec paths (with method M) that url P can be. A filled-in segment may hold a
// slash as far as the types know, so "/x/invoices/in_1/send" also fits "/{env}/invoices/{id}";
// Match keeps the most specific: a path is dropped when another that P fits is a special case
// of it.
type Matches<P extends string, M extends Method> = { [K in With<M>]: P extends URL<K> ? K : never }[With<M>];
type Narrower<K, P extends string, M extends Method> = {
  [K2 in Matches<P, M>]: K2 extends K ? never : Fill<Below<K2>> extends Fill<Below<K>> ? K2 : never
}[Matches<P, M>];
type Match<P extends string, M extends Method> = {
  [K in Matches<P, M>]: [Narrower<K, P, M>] extends [never] ? K : never
}[Matches<P, M>];

type JSONOf<R> = R extends { content: { 'application/json': infer T } } ? T : null;
type Success<O> = O extends { responses: infer R }
  ? 200 extends keyof R ? JSONOf<R[200]> : 201 extends keyof R ? JSONOf<R[201]> : 204 extends keyof R ? null : unknown
  : unknown;
type BodyOf<O> = O extends { requestBody: { content: { 'application/json': infer B } } } ? B
  : O extends { requestBody?: { content: { 'application/json': infer B } } } ? B | undefined : undefined;

// Path<M> is any url with method M in the spec; Answer and Body are its operation's shapes.
export type Path<M extends Method> = URL<With<M>>;
export type Answer<P extends string, M extends Method> = Success<Op<Match<P, M>, M>>;
export type Body<P extends string, M extends Method> = BodyOf<Op<Match<P, M>, M>>;

// Ctx is what app.js hands a page's list(ctx) and detail(ctx).
export interface Ctx {
  env: 'test' | 'live';
  base: '/test' | '/live';
  id: string | null;
  query: URLSearchParams;
  session: Schemas['Session'];
  alive(): boolean;
  href(params: Record<string, string | null | undefined>): string;
  navigate(url: string, opts?: { replaceState?: boolean }): void;
  reload(): Promise<void>;
  title(t: string): void;
}
