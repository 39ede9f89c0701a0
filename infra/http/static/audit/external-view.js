// The round page's record of a provider's round (rules.md 10): no card and no seed
// here (the provider's certified game server decided the outcome), so the page checks
// what it can: that the wallet moved exactly what each of the provider's calls says,
// call by call, and that the round's money balances. Built from the same three answers
// as any round's record (round-view.js), whose money sections it shares.

import { definitions, h, instant, logLink, section, table } from './dom.js';
import { formatCents, formatChange, roundBooks, WALLET_TOPIC } from './ledger.js';
import { balances, ledgerLines, summary, trail } from './round-view.js';

// A provider's call as the round records it, and the wallet event that must match it.
const CALLS = {
  BetTaken: { call: 'bet', wallet: 'StakeTaken', sign: -1n },
  BetRolledBack: { call: 'rollback', wallet: 'Credited', kind: 'rollback', sign: 1n },
  WinPaid: { call: 'win', wallet: 'Credited', kind: 'win', sign: 1n },
};

const mono = (text) => h('span', { class: 'mono' }, text);
const none = (text) => h('span', { class: 'none' }, text);

/** The round's calls in log order, each with the wallet event of its transaction id. */
export function pairCalls(round, events) {
  const wallet = events.filter((event) => event.topic.startsWith(WALLET_TOPIC) && event.data.round_id === round.round_id);
  const calls = events
    .filter((event) => event.aggregate_id === round.round_id && CALLS[event.type])
    .map((event) => {
      const { wallet: type, kind } = CALLS[event.type];
      const match = wallet.find(
        (candidate) => candidate.type === type && candidate.data.transaction_id === event.data.transaction_id && (!kind || candidate.data.kind === kind),
      );
      return { event, ...CALLS[event.type], money: match || null };
    });
  const paired = new Set(calls.map((call) => call.money).filter(Boolean));
  return { calls, unpaired: wallet.filter((event) => !paired.has(event)) };
}

/**
 * Whether the wallet moved what the calls say: each call has its wallet event of the same
 * transaction id and amount, no wallet event of the round is left over, and the round's
 * stakes equal its rollbacks, wins and the house's result. {state, title, detail}.
 */
export function checkCalls(round, events) {
  const { calls, unpaired } = pairCalls(round, events);
  for (const call of calls) {
    const what = `the ${call.call} ${call.event.data.transaction_id} (log position ${call.event.position})`;
    if (!call.money) return mismatch(`${what} moved no money in the wallet`);
    if (call.money.data.amount_cents !== call.event.data.amount_cents) {
      const [said, moved] = [call.event.data.amount_cents, call.money.data.amount_cents].map(formatCents);
      return mismatch(`${what} says ${said}, the wallet moved ${moved} (log position ${call.money.position})`);
    }
  }
  if (unpaired.length) {
    const [first] = unpaired;
    return mismatch(`the wallet event at log position ${first.position} (${first.type} ${first.data.transaction_id}) answers no call of the round`);
  }
  const sum = (call) => calls.filter((found) => found.call === call).reduce((total, found) => total + BigInt(found.event.data.amount_cents), 0n);
  const [staked, rolledBack, won] = [sum('bet'), sum('rollback'), sum('win')];
  const house = staked - rolledBack - won;
  return {
    state: 'verified',
    title: 'Verified',
    detail:
      `each of the ${calls.length} calls moved exactly its amount in the wallet; stakes ${formatCents(staked)} = ` +
      `rollbacks ${formatCents(rolledBack)} + wins ${formatCents(won)} + the house's result ${formatChange(house)}`,
  };
}

function mismatch(detail) {
  return { state: 'mismatch', title: 'Mismatch', detail };
}

/** Every section of a provider's round's record, the money check first. */
export async function externalRecord(round, entry, audit) {
  const events = audit.events;
  const verdict = checkCalls(round, events);
  const money = await roundBooks(round, entry, events);
  return {
    verdict,
    sections: [summary(round, entry, events), moneyCheck(round, verdict), calls(round, events), balances(money), ledgerLines(money), trail(round, events, money)],
  };
}

function moneyCheck(round, verdict) {
  const statement = h(
    'p',
    { id: 'verdict', class: `verdict ${verdict.state}`, 'data-verdict': verdict.state, role: 'status' },
    h('strong', { class: 'verdict-title' }, `${verdict.state === 'verified' ? '\u2713' : '\u2717'} ${verdict.title}`),
    ': ',
    h('span', { id: 'verdict-detail' }, verdict.detail),
  );
  const note = h(
    'p',
    {},
    `The outcome was decided by the game server of the provider ${round.variant}, not dealt here: there are no cards and no seed `,
    'to check (the provider\u2019s own certification covers them). This page checks the casino\u2019s side of each call.',
  );
  return section('fairness', 'Money check', statement, note);
}

function calls(round, events) {
  const { calls: found } = pairCalls(round, events);
  const rows = found.map((call) => {
    const { data } = call.event;
    const bonus = data.bonus_cents ? formatCents(data.bonus_cents) : none('0.00');
    return h(
      'tr',
      { class: call.money ? null : 'bad-row' },
      h('td', {}, logLink(call.event.position)),
      h('td', {}, instant(data.at || call.event.at)),
      h('td', {}, call.call),
      h('td', {}, mono(data.transaction_id)),
      h('td', {}, data.bet_transaction_id ? mono(data.bet_transaction_id) : none('\u2014')),
      h('td', { class: 'num' }, formatChange(call.sign * BigInt(data.amount_cents))),
      h('td', { class: 'num' }, bonus),
      h('td', {}, call.money ? logLink(call.money.position) : none('none')),
    );
  });
  const ended = events.find((event) => event.aggregate_id === round.round_id && event.type === 'Ended');
  const endedBy = { provider: 'the provider (end-round)', inactive: 'the casino, for want of calls (rules.md 10)' };
  return section(
    'bets',
    'The provider\u2019s calls',
    rows.length
      ? table('Every bet, rollback and win, in log order, with the wallet event that moved its money (amounts as the player\u2019s change)', ['Event', 'At', 'Call', 'Transaction', 'Of the bet', 'Amount', 'Of it bonus', 'Wallet event'], rows, { id: 'call-lines' })
      : h('p', {}, 'No call moved money.'),
    definitions([
      ['Provider\u2019s round id', mono(round.provider_round_id)],
      ['Staked', round.staked],
      ['Won', round.won],
      ['Net to the player', round.net],
      ['Ended by', ended ? [endedBy[ended.data.reason] || ended.data.reason, ' ', logLink(ended.position)] : none('not yet')],
    ]),
  );
}
