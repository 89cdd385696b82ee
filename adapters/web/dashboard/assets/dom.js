// @ts-check
// Building DOM nodes without parsing HTML strings: every text goes in as a text node, so data from the API
// (names, URLs, e-mail bodies) can never become markup.

// h creates an element. attrs: "class", "on<event>" (a listener), true (a boolean attribute),
// null/false/undefined (left out), anything else (an attribute). Children may be nodes, strings,
// numbers, nested arrays, or null/false (left out).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

// append adds children (as h accepts them) to el.
export function append(el, children) {
  for (const c of [children].flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// clear empties el and fills it with children.
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

let uid = 0;
// id returns a fresh element id with prefix, for label/for and aria-describedby pairs.
export function id(prefix) {
  uid += 1;
  return `${prefix}-${uid}`;
}
