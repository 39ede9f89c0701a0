// The index page: rounds from GET /v1/rounds, filtered by player and time, each linking
// to its round page.

import { h, instant, table } from './dom.js';

export const FILTERS = ['player_id', 'from', 'to'];
export const PAGE_ROWS = 100;

/** The filters of the page's own address, as the JSON route takes them. */
export function filtersOf(search) {
  const given = new URLSearchParams(search);
  const chosen = new URLSearchParams();
  for (const name of [...FILTERS, 'after']) {
    const value = (given.get(name) || '').trim();
    if (value) chosen.set(name, value);
  }
  return chosen;
}

export function roundsTable(answer) {
  const rows = answer.rounds.map((round) =>
    h(
      'tr',
      {},
      h('th', { scope: 'row' }, h('a', { href: `/audit/rounds/${encodeURIComponent(round.round_id)}`, class: 'mono' }, round.round_id)),
      h('td', {}, round.game),
      h('td', {}, round.variant),
      h('td', {}, round.mode),
      h('td', {}, round.status),
      h('td', {}, round.players.map((player) => `${player.player_id} (${player.role})`).join(', ')),
      h('td', {}, instant(round.started_at)),
      h('td', {}, instant(round.ended_at)),
    ),
  );
  if (rows.length === 0) return h('p', { id: 'no-rounds' }, 'No round matches.');
  return table(
    'Rounds in the order they opened',
    ['Round', 'Game', 'Variant', 'Mode', 'Status', 'Players', 'Opened', 'Ended'],
    rows,
    { id: 'rounds' },
  );
}

export function nextPage(filters, answer) {
  if (answer.next_after === null || answer.next_after === undefined) return null;
  const next = new URLSearchParams(filters);
  next.set('after', String(answer.next_after));
  return h('p', {}, h('a', { href: `/audit/rounds?${next}`, rel: 'next', id: 'next-page' }, 'Next page of rounds'));
}
