// The round page's record: the round, its fairness check, its cards, its bets and
// decisions, each participant's money, and its whole audit trail, each line linked to
// its log position. Built from GET /v1/rounds/{id}, /v1/rounds/{id}/audit and the
// round's entry in GET /v1/rounds.

import { cardElement, cardName, definitions, h, instant, logLink, section, table } from './dom.js';
import { formatCents, formatChange, participantsOf, roundBooks, WALLET_TOPIC } from './ledger.js';
import { checkRound, dealtCards, placeCards } from './verify.js';

const SECRET_FIELDS = ['seed', 'shoe_prefix', 'hole_card'];
const FINISHED = ['settled', 'voided'];
const VERDICT_SIGNS = { verified: '\u2713', mismatch: '\u2717', pending: '\u2026', unavailable: '?' };
const LEDGER_ENTRIES = {
  FundsHeld: 'stake held',
  HoldReleased: 'hold released',
  RoundSettled: 'round result (hold released)',
  CommissionCharged: 'commission',
  PointsChanged: 'dealer points',
  BonusHeld: 'bonus stake held',
  BonusReleased: 'bonus hold released',
  BonusSettled: 'bonus result (bonus hold released)',
  BonusConverted: 'bonus converted to cash',
  StakeTaken: 'stake taken',
  BonusWagered: 'stakes counted towards the bonus',
};

/** Every section of the record, the fairness check done first. */
export async function roundRecord(round, entry, audit) {
  const events = audit.events;
  const groups = placeCards(round, dealtCards(events, round.round_id));
  const verdict = await safely(() => checkRound(round, events, groups));
  const money = await roundBooks(round, entry, events);
  return {
    verdict,
    sections: [
      summary(round, entry, events),
      fairness(round, verdict, groups),
      cards(round, groups, verdict),
      bets(round, events),
      decisions(round, events),
      balances(money),
      ledgerLines(money),
      trail(round, events, money),
    ],
  };
}

async function safely(check) {
  try {
    return await check();
  } catch (error) {
    const facts = { prefix: [] };
    return { state: 'unavailable', title: 'Cannot be checked here', detail: error.message, facts, checks: new Map() };
  }
}

const own = (round, events) => events.filter((event) => event.aggregate_id === round.round_id);
const mono = (text) => h('span', { class: 'mono' }, text);
const none = (text) => h('span', { class: 'none' }, text);
const cents = (value) => (value === null || value === undefined ? none('\u2014') : formatCents(value));
const change = (value) => (value === null || value === undefined ? none('\u2014') : formatChange(value));

function gameName(round) {
  if (round.game === 'baccarat' && round.variant === 'p2p') return 'Baccarat, P2P (a player deals)';
  if (round.game === 'baccarat') return 'Baccarat, punto banco (the house banks)';
  if (round.game === 'blackjack') return 'Blackjack Baden-Baden';
  if (round.game === 'external') return `A provider\u2019s game: ${round.game_id}, of ${round.variant}`;
  return round.game || 'a game this page does not know';
}

function outcome(round) {
  if (round.game === 'baccarat' && round.outcome) {
    const totals = `player ${round.hands.player.total} against banker ${round.hands.banker.total}`;
    return round.outcome === 'tie' ? `tie, ${totals}` : `${round.outcome} wins, ${totals}`;
  }
  if (round.game === 'blackjack' && round.outcome) {
    const { dealer_total: total, dealer_blackjack: blackjack, dealer_bust: bust } = round.outcome;
    return `dealer ${blackjack ? 'blackjack' : total}${bust ? ', bust' : ''}`;
  }
  if (round.game === 'external') return `net to the player ${round.net}`;
  return none(FINISHED.includes(round.status) ? 'none' : 'not yet');
}

export function summary(round, entry, events) {
  const mine = own(round, events);
  const opened = mine.find((event) => event.type === 'Opened');
  const ended = mine.find((event) => ['Settled', 'Voided', 'Ended'].includes(event.type));
  const people = participantsOf(round, entry);
  const limits = round.limits ? `${round.limits.min} to ${round.limits.max}${round.limits.per ? ` per ${round.limits.per}` : ' per round'}` : null;
  let where = ['Table', none('none: a single-player round')];
  if (round.table_id) where = ['Table', mono(round.table_id)];
  else if (round.hall) where = ['Hall', round.hall];
  else if (round.game === 'external') where = ['Table', none('none: a provider\u2019s game')];
  return section(
    'summary',
    'The round',
    definitions([
      ['Game', gameName(round)],
      round.variant !== round.hall && ['Variant', round.variant || none('\u2014')],
      where,
      ['Mode', round.mode === 'real' ? 'real money' : `${round.mode} money`],
      ['Players and roles', h('ul', { class: 'plain' }, people.map((p) => h('li', {}, mono(p.id), ` (${p.role})`)))],
      ['Status', h('span', { id: 'round-status' }, round.status)],
      ['Opened', instant((entry && entry.started_at) || (opened && opened.at)), opened && [' ', logLink(opened.position)]],
      ['Ended', instant((entry && entry.ended_at) || (ended && ended.at)), ended && [' ', logLink(ended.position)]],
      limits && ['Limits', limits],
      ['Outcome', outcome(round)],
      round.void_reason && ['Voided because', round.void_reason],
    ]),
  );
}

function fairness(round, verdict, groups) {
  const facts = verdict.facts || { prefix: [] };
  const statement = h(
    'p',
    { id: 'verdict', class: `verdict ${verdict.state}`, 'data-verdict': verdict.state, role: 'status' },
    h('strong', { class: 'verdict-title' }, `${VERDICT_SIGNS[verdict.state]} ${verdict.title}`),
    ': ',
    h('span', { id: 'verdict-detail' }, verdict.detail),
  );
  const shoe = facts.algorithm ? `${facts.algorithm}, ${facts.decks} decks (docs/shuffle.md)` : null;
  return section(
    'fairness',
    'Fairness check',
    statement,
    definitions([
      shoe && ['Shuffle', shoe],
      ['Commitment (published at opening)', mono(facts.commitment || round.seed_commitment || '\u2014')],
      ['Seed', facts.seed ? mono(facts.seed) : none('secret until the round is over')],
      facts.seedHash && ['SHA-256 of the seed, computed in this browser', mono(facts.seedHash)],
      facts.prefix.length > 0 && ['Certification prefix (test mode)', facts.prefix.join(' ')],
    ]),
    dealOrder(groups, verdict),
  );
}

function dealOrder(groups, verdict) {
  const placed = groups.flatMap((group) => group.cards.map((card) => ({ ...card, group })));
  placed.sort((a, b) => a.position - b.position);
  if (placed.length === 0) return h('p', {}, 'No card has been dealt.');
  const rows = placed.map((card) => {
    const check = verdict.checks.get(card.position);
    const shown = card.shown !== undefined && card.shown !== card.card ? mono(card.shown) : none('the same');
    let result = none('not checked');
    if (check) result = h('span', { class: check.ok ? 'ok' : 'bad' }, check.ok ? '\u2713 matches' : '\u2717 differs');
    return h(
      'tr',
      { class: check && !check.ok ? 'bad-row' : null },
      h('td', { class: 'num' }, card.position),
      h('td', {}, card.group.label),
      h('td', {}, card.mark, card.by === 'system' ? ' (by the system)' : ''),
      h('td', {}, card.card === null ? none('face down') : mono(card.card)),
      h('td', {}, shown),
      h('td', {}, check ? mono(check.expected) : none('\u2014')),
      h('td', {}, result),
      h('td', {}, logLink(card.event.position)),
    );
  });
  return table(
    'Every card in shoe order: as the audit trail records it, as the round shows it, and as the shoe re-derived from the seed holds it',
    ['Shoe position', 'Dealt to', 'How', 'Recorded', 'Round shows', 'Shoe holds', 'Check', 'Event'],
    rows,
    { id: 'deal-order' },
  );
}

function handNote(round, group) {
  if (round.game === 'baccarat' && round.hands && round.hands[group.key]) {
    const total = round.hands[group.key].total;
    return total === null ? '' : `total ${total}`;
  }
  if (round.game !== 'blackjack') return '';
  if (group.key === 'dealer') {
    const dealer = round.dealer || {};
    const total = dealer.total === null || dealer.total === undefined ? '' : `${dealer.hole_card_hidden ? 'showing' : 'total'} ${dealer.total}`;
    return [total, dealer.hole_card_hidden ? 'hole card face down' : ''].filter(Boolean).join(', ');
  }
  const [, box, hand] = group.key.split('-').map(Number);
  const shown = (round.boxes || []).find((candidate) => candidate.box === box);
  const played = shown && shown.hands[hand];
  if (!played) return '';
  const parts = [`total ${played.soft ? 'soft ' : ''}${played.total}`, `stake ${played.stake}`];
  if (played.blackjack) parts.push('blackjack');
  if (played.doubled) parts.push('doubled');
  if (played.result) parts.push(`${played.result}, net ${played.net}`);
  return parts.join(', ');
}

function cards(round, groups, verdict) {
  const hands = groups.map((group) => {
    const note = handNote(round, group);
    const title = `hand-${group.key}`;
    return h(
      'div',
      { class: 'hand', role: 'group', 'aria-labelledby': title },
      h('h3', { id: title }, group.label, note ? h('span', { class: 'hand-note' }, ` \u2014 ${note}`) : null),
      group.cards.length === 0
        ? h('p', { class: 'none' }, 'no card yet')
        : h(
            'ol',
            { class: 'cards' },
            group.cards.map((card) =>
              cardElement(card.shown !== undefined ? card.shown : card.card, {
                caption: `#${card.position} \u00b7 ${card.mark}`,
                marks: [card.third && 'third', card.draw && 'drawn', card.hole && 'hole'].filter(Boolean),
                check: verdict.checks.get(card.position),
              }),
            ),
          ),
    );
  });
  const legend = h(
    'p',
    { class: 'legend' },
    'Each card shows its shoe position (#) and how it was dealt. A third card or a card drawn later has a dashed frame; ',
    'a card that matches the re-derived shoe says \u201c\u2713 as the shoe\u201d, one that does not has a double frame and names the card the shoe holds.',
  );
  return section('cards', 'The cards', legend, h('div', { class: 'hands' }, hands));
}

function bets(round, events) {
  const mine = own(round, events);
  // At a multi-player table each bet and payout names its player; a round of one
  // player (house, P2P: the answer names its player_id) needs no name.
  const whose = (data) => (data.player_id && !round.player_id ? `${data.player_id}: ` : '');
  const target = (data) => whose(data) + (data.spot !== undefined ? data.spot : `box ${data.box}`);
  const betRows = mine
    .filter((event) => event.type === 'BetPlaced' || event.type === 'BetRemoved')
    .map((event) =>
      h(
        'tr',
        {},
        h('td', {}, logLink(event.position)),
        h('td', {}, instant(event.at)),
        h('td', {}, target(event.data)),
        h('td', {}, event.type === 'BetPlaced' ? 'placed' : 'taken back'),
        h('td', { class: 'num' }, formatCents(event.data.amount_cents)),
        h('td', {}, Array.isArray(event.data.chips) ? event.data.chips.map((chip) => `$${chip}`).join(' ') : none('\u2014')),
      ),
    );
  const payoutRows = mine
    .filter((event) => event.type === 'PayoutMade')
    .map((event) => {
      const { data } = event;
      const detail = Array.isArray(data.hands)
        ? data.hands.map((hand, index) => `hand ${index + 1}: ${hand.outcome}, stake ${formatCents(hand.stake_cents)}, net ${formatChange(hand.net_cents)}`).join('; ') +
          (data.insurance_net_cents ? `; insurance ${formatChange(data.insurance_net_cents)}` : '')
        : `stake ${formatCents(data.stake_cents)}`;
      return h('tr', {}, h('td', {}, logLink(event.position)), h('td', {}, target(data)), h('td', {}, detail), h('td', { class: 'num' }, formatChange(data.net_cents)));
    });
  const commission = mine.find((event) => event.type === 'CommissionCharged');
  const nets = round.net ? Object.entries(round.net).map(([who, net]) => `${who} ${net}`).join(', ') : null;
  return section(
    'bets',
    'Bets, payouts and commission',
    betRows.length
      ? table('Every bet, in log order', ['Event', 'At', 'On', 'What', 'Amount', 'Chips'], betRows, { id: 'bet-lines' })
      : h('p', {}, 'No bet was placed.'),
    payoutRows.length
      ? table('Every payout (net to the player)', ['Event', 'On', 'Detail', 'Net'], payoutRows, { id: 'payouts' })
      : h('p', {}, 'No payout yet.'),
    definitions([
      ['Total stake', round.total_stake || none('\u2014')],
      round.held !== undefined && ['Held now', round.held],
      ['Commission', commission ? [formatCents(commission.data.commission_cents), ' ', logLink(commission.position)] : none(round.variant === 'p2p' ? 'not yet' : 'none (house game)')],
      ['Net per participant', nets || none('not settled')],
    ]),
  );
}

function decisions(round, events) {
  const kinds = ['PlayerActed', 'Interrupted', 'Resumed'];
  const rows = own(round, events)
    .filter((event) => kinds.includes(event.type))
    .map((event) => {
      const { data } = event;
      const acted = event.type === 'PlayerActed';
      return h(
        'tr',
        {},
        h('td', {}, logLink(event.position)),
        h('td', {}, instant(event.at)),
        h('td', {}, acted ? `box ${data.box}, hand ${data.hand + 1}` : none('\u2014')),
        h('td', {}, acted ? data.action : event.type === 'Interrupted' ? `interrupted: ${data.reason}` : 'resumed'),
        h('td', {}, acted ? data.by : 'system'),
        h('td', {}, acted && data.cards.length ? data.cards.map((card) => cardName(card)).join(', ') : none('none')),
        h('td', { class: 'num' }, acted && data.added_stake_cents ? formatCents(data.added_stake_cents) : none('\u2014')),
      );
    });
  const next = round.legal_actions
    ? h('p', { id: 'next-to-act' }, `Next to act: box ${round.legal_actions.box}, hand ${round.legal_actions.hand + 1} (${round.legal_actions.actions.join(', ')}).`)
    : null;
  let body;
  if (rows.length) {
    body = table('Every decision, and by whom (player or system)', ['Event', 'At', 'Where', 'Decision', 'By', 'Cards taken', 'Stake added'], rows, { id: 'decision-lines' });
  } else if (round.game === 'baccarat') {
    body = h('p', {}, 'Baccarat has no decisions: both hands draw by the tableau (rules.md 2).');
  } else {
    body = h('p', {}, 'No decision has been made.');
  }
  return section('decisions', 'Decisions', body, next);
}

export function balances(money) {
  const rows = money.books.map((book) =>
    h(
      'tr',
      {},
      h('th', { scope: 'row' }, mono(book.id)),
      h('td', {}, book.role),
      h('td', { class: 'num' }, book.before === null ? none(book.settled ? '\u2014' : 'no money moved') : formatCents(book.before)),
      h('td', { class: 'num' }, cents(book.after)),
      h('td', { class: 'num' }, change(book.net)),
      h('td', { class: 'num' }, formatCents(book.commission)),
      h('td', { class: 'num' }, formatCents(book.stillHeld)),
      h('td', { class: 'num' }, book.points === 0n ? none('0') : `${book.points > 0n ? '+' : ''}${book.points}`),
      h('td', { class: 'num' }, book.bonusNet === 0n ? none('0.00') : formatChange(book.bonusNet)),
    ),
  );
  return section(
    'balances',
    'Balances before and after',
    table(
      'Each participant\u2019s wallet: the balance before the round\u2019s first result and after its last, read off the ledger lines below',
      ['Who', 'Role', 'Before', 'After', 'Change', 'Commission', 'Still held', 'Dealer points', 'Bonus result'],
      rows,
      { id: 'balance-lines' },
    ),
    h('p', { class: 'legend' }, 'Before = the balance after a ledger line less that line\u2019s own change (a result\u2019s net, a commission charged); holds move what is available, not the balance. Balances and changes are cash; a stake\u2019s bonus part is held and settled apart (its result in Bonus result, rules.md 9).'),
  );
}

export function ledgerLines(money) {
  const rows = money.lines.map((line) => {
    const { event } = line;
    const postings = Array.isArray(event.data.postings) ? event.data.postings.map(([account, amount]) => `${account} ${formatChange(amount)}`).join('; ') : '';
    let entry = LEDGER_ENTRIES[event.type] || event.type;
    if (event.type === 'Credited') entry = `${event.data.kind} credited`;
    if (line.points) entry = `${entry} ${line.points.change > 0 ? '+' : ''}${line.points.change} (now ${line.points.after})`;
    return h(
      'tr',
      {},
      h('td', {}, logLink(event.position)),
      h('td', {}, instant(event.at)),
      h('td', {}, mono(line.who.id)),
      h('td', {}, entry),
      h('td', { class: 'num' }, line.held === null ? none('\u2014') : formatChange(line.held)),
      h('td', { class: 'num' }, line.change === null ? none('\u2014') : formatChange(line.change)),
      h('td', { class: 'num' }, cents(line.balanceAfter)),
      h('td', { class: 'postings' }, postings || none('no posting')),
    );
  });
  return section(
    'ledger',
    'Ledger lines and holds',
    rows.length
      ? table('Every wallet event of the round, in log order', ['Event', 'At', 'Wallet of', 'Entry', 'Held', 'Balance change', 'Balance after', 'Postings'], rows, { id: 'ledger-lines' })
      : h('p', {}, 'No wallet event yet.'),
  );
}

function fieldText(name, value, hidden) {
  if (value === null && hidden && SECRET_FIELDS.includes(name)) return `${name}: hidden until the round is over`;
  return `${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`;
}

export function trail(round, events, money) {
  const owners = new Map(money.lines.map((line) => [line.event.aggregate_id, line.who.id]));
  const hidden = !FINISHED.includes(round.status);
  const rows = events.map((event) => {
    let of = 'the round';
    if (event.topic.startsWith(WALLET_TOPIC)) of = `wallet of ${owners.get(event.aggregate_id) || event.aggregate_id}`;
    else if (event.aggregate_id !== round.round_id) of = event.aggregate_id;
    const data = Object.entries(event.data || {}).map(([name, value]) => fieldText(name, value, hidden));
    return h(
      'tr',
      { id: `event-${event.position}` },
      h('td', { class: 'num' }, event.position),
      h('td', {}, instant(event.at)),
      h('td', {}, event.type),
      h('td', {}, of),
      h('td', { class: 'num' }, event.version),
      h('td', { class: 'data' }, data.join('; ')),
    );
  });
  return section(
    'trail',
    'The audit trail',
    table('Every event of the round and of its wallets, in log order (GET /v1/rounds/{id}/audit)', ['Log position', 'At', 'Event', 'Of', 'Version', 'Data'], rows, { id: 'trail-lines' }),
  );
}
