// @ts-check
// Test mailbox (test mode only): the e-mails Kassa would have sent (receipts), kept by the
// development mailbox instead of an SMTP server. Messages show as text; the HTML version is
// shown as source, never rendered, so a message cannot run anything in the dashboard. Files
// sent with a message (an invoice's PDF) are offered for download, never opened in the page.
import { get, query } from '../api.js';
import { h } from '../dom.js';
import { when } from '../format.js';
import { facts, table } from '../ui.js';
import { pageHead } from './common.js';

async function messages() {
  return (await get(`/test/mailbox${query({ limit: 100 })}`)).data || [];
}

/** @param {import('../types').Ctx} ctx */
export async function list(ctx) {
  ctx.title('Test mailbox');
  const msgs = await messages();
  return h('div', null,
    pageHead('Test mailbox'),
    h('p', { class: 'hint' }, 'E-mails sent in test mode (e.g. receipts to customer_email) land here instead of in a real inbox.'),
    table([
      { label: 'Subject', cell: (m) => h('a', { href: `/test/mailbox/${m.id}`, 'data-message': m.id }, m.subject || '(no subject)') },
      { label: 'To', cell: (m) => m.to },
      { label: 'Files', cell: (m) => ((m.attachments || []).length ? String(m.attachments.length) : '—') },
      { label: 'From', cell: (m) => m.from },
      { label: 'Received', cell: (m) => when(m.created) },
    ], msgs, 'No messages yet. Pay a test checkout session with a customer e-mail to receive a receipt.', 'Messages'));
}

/** @param {import('../types').Ctx} ctx */
export async function detail(ctx) {
  ctx.title('Message');
  const msgs = await messages();
  const m = msgs.find((x) => x.id === ctx.id);
  const back = h('a', { href: '/test/mailbox' }, 'Back to the mailbox');
  if (!m) return h('div', null, h('h1', null, 'Message not found'), h('p', null, 'The mailbox keeps the latest messages only. ', back));
  ctx.title(m.subject || 'Message');
  return h('div', null,
    h('p', { class: 'breadcrumb' }, back),
    pageHead(m.subject || '(no subject)'),
    h('div', { class: 'panel message-head' }, facts([
      ['From', m.from], ['To', m.to], ['Received', when(m.created, '—', true)],
    ])),
    attachments(m),
    h('h2', null, 'Text'),
    h('pre', { id: 'message-text' }, m.text || '(no text part)'),
    m.html ? h('details', null, h('summary', null, 'HTML version (source)'), h('pre', null, m.html)) : null);
}

// size writes a byte count for people (1 KB = 1,000 bytes).
function size(n) {
  if (n < 1000) return `${n} bytes`;
  if (n < 1000000) return `${Math.round(n / 100) / 10} KB`;
  return `${Math.round(n / 100000) / 10} MB`;
}

function attachments(m) {
  const files = m.attachments || [];
  if (!files.length) return null;
  return h('section', { 'aria-labelledby': 'message-files' },
    h('h2', { id: 'message-files' }, 'Attachments'),
    h('ul', { class: 'attachments', 'data-attachments': '' }, ...files.map((f) =>
      h('li', null,
        h('a', { href: f.url, download: f.filename, 'data-attachment': String(f.index) },
          `Download ${f.filename}`),
        h('span', { class: 'hint' }, ` ${f.content_type}, ${size(f.size)}`)))));
}
