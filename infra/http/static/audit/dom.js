// Building the page: elements from data, never from HTML text (no innerHTML), so nothing
// in a round can inject markup; and cards drawn as cards, readable without colour.

import { rankOf } from './verify.js';

const SUITS = {
  S: { symbol: '\u2660', name: 'spades' },
  H: { symbol: '\u2665', name: 'hearts' },
  D: { symbol: '\u2666', name: 'diamonds' },
  C: { symbol: '\u2663', name: 'clubs' },
};
const RANK_NAMES = { A: 'ace', J: 'jack', Q: 'queen', K: 'king' };

/** h('td', {class: 'mono'}, 'text', otherNode): attributes, then children. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function section(id, title, ...children) {
  return h('section', { id, 'aria-labelledby': `${id}-title` }, h('h2', { id: `${id}-title` }, title), ...children);
}

export function table(caption, headings, rows, attributes = {}) {
  return h(
    'table',
    attributes,
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, headings.map((heading) => h('th', { scope: 'col' }, heading)))),
    h('tbody', {}, rows),
  );
}

export function definitions(pairs) {
  return h(
    'dl',
    { class: 'facts' },
    pairs.filter(Boolean).map(([term, value]) => h('div', {}, h('dt', {}, term), h('dd', {}, value))),
  );
}

/** An instant as the API writes it, shown in UTC to the millisecond. */
export function instant(iso) {
  if (!iso) return h('span', { class: 'none' }, 'not yet');
  const moment = new Date(iso);
  const shown = Number.isNaN(moment.getTime())
    ? iso
    : `${moment.toISOString().replace('T', ' ').replace(/\.(\d{3})Z$/, '.$1')} UTC`;
  return h('time', { datetime: iso }, shown);
}

/** A link to an event's row in the audit trail of this page. */
export function logLink(position) {
  return h('a', { href: `#event-${position}`, class: 'log' }, `log ${position}`);
}

export function suitOf(card) {
  return card && card.length > 1 ? SUITS[card.slice(-1)] : undefined;
}

/** "10 of hearts", "queen of spades", or "a king" for a bare rank. */
export function cardName(card) {
  const rank = rankOf(card);
  const name = RANK_NAMES[rank] || rank;
  const suit = suitOf(card);
  return suit ? `${name} of ${suit.name}` : `a ${name} (no suit recorded)`;
}

/**
 * A card as a card: its rank and suit symbol (the shape tells the suit, not the colour),
 * a caption (shoe position, how it was dealt) and, once checked, the shoe's verdict.
 */
export function cardElement(card, { caption = '', marks = [], check = null } = {}) {
  const classes = ['card', ...marks];
  const label = [];
  let face;
  if (card === null || card === undefined) {
    classes.push('back');
    face = h('span', { class: 'face', 'aria-hidden': 'true' }, h('span', { class: 'back-text' }, 'face down'));
    label.push('face down');
  } else {
    const suit = suitOf(card);
    if (suit && (suit.name === 'hearts' || suit.name === 'diamonds')) classes.push('red');
    const symbol = suit ? suit.symbol : '';
    face = h(
      'span',
      { class: 'face', 'aria-hidden': 'true' },
      h('span', { class: 'corner' }, h('span', { class: 'rank' }, rankOf(card)), h('span', { class: 'suit' }, symbol)),
      h('span', { class: 'pip' }, symbol || rankOf(card)),
      h('span', { class: 'code' }, card),
    );
    label.push(cardName(card));
  }
  if (caption) label.push(caption);
  let verdict = null;
  if (check) {
    classes.push(check.ok ? 'matches' : 'mismatch');
    const text = check.ok ? '\u2713 as the shoe' : `\u2717 shoe holds ${check.expected}`;
    verdict = h('span', { class: 'check' }, text);
    label.push(check.ok ? 'matches the shoe' : `does not match: the shoe holds ${check.expected}`);
  }
  return h(
    'li',
    { class: classes.join(' '), role: 'img', 'aria-label': label.join('; ') },
    face,
    h('span', { class: 'caption', 'aria-hidden': 'true' }, caption),
    verdict && h('span', { 'aria-hidden': 'true' }, verdict),
  );
}

export function setState(state) {
  document.body.dataset.state = state;
}

export function clear(element) {
  while (element.firstChild) element.firstChild.remove();
}
