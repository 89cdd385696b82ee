// @ts-check
// Preact with htm (vendor/, pinned): the pages that hold state (the invoice editor, the refund
// form) are components written as tagged templates, build-free. html`<p>${text}</p>` puts text
// in as text and values in as attribute values, never as markup. The other pages build DOM with
// dom.js; island lets them embed a component.
import { html, render } from './vendor/htm-preact-standalone.module.js';

export {
  html, render, useState, useReducer, useEffect, useLayoutEffect, useRef, useMemo, useCallback, useContext, createContext, Component,
} from './vendor/htm-preact-standalone.module.js';

/**
 * island renders vnode into a new element (a <div> unless tag names another) and returns it,
 * so a page built with dom.js can place a component among its nodes.
 * @param {import('./vendor/htm-preact-standalone.module.js').VNode} vnode
 * @param {string} [tag]
 * @returns {HTMLElement}
 */
export function island(vnode, tag = 'div') {
  const el = document.createElement(tag);
  render(vnode, el);
  return el;
}
