// Types of htm-preact-standalone.module.js for `tsc --noEmit` (make lint): htm's declaration
// of its Preact binding, whose Preact types come from tools/dashboard-types/node_modules.
export * from 'htm/preact';
export { createContext } from 'preact';
export type { VNode, ComponentChildren } from 'preact';
