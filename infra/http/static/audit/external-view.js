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

const MONEY_MOVES = ['StakeTaken', 'Credited'];
const mono = (text) => h('span', { class: 'mono' }, text);
const none = (text) => h('span', { class: 'none' }, text);

/**
 * The round's calls in log order, each with the wallet event of its transaction id (each
 * wallet event answers one call at most), and the round's money moves no call answers.
 * Only a stake taken or a credit moves a call's money: the round's other wallet events
 * (the wagering counted at its end, a bonus converted then) answer no call.
 */
export function pairCalls(round, events) {
  const moves = events.filter(
    (event) => event.topic.startsWith(WALLET_TOPIC) && MONEY_MOVES.includes(event.type) && event.data.round_id === round.round_id,
  );
  const used = new Set();
  const calls = events
    .filter((event) => event.aggregate_id === round.round_id && CALLS[event.type])
    .map((event) => {
      const { wallet: type, kind } = CALLS[event.type];
      const match = moves.find(
        (candidate) =>
          !used.has(candidate) && candidate.type === type && candidate.data.transaction_id === event.data.transaction_id && (!kind || candidate.data.kind === kind),
      );
      if (match) used.add(match);
      return { event, ...CALLS[event.type], money: match || null };
    });
  return { calls, unpaired: moves.filter((event) => !used.has(event)) };
}

/** What a wallet event posted to the house's side of the provider's games. */
function housePosted(event, houseAccount) {
  const postings = Array.isArray(event.data.postings) ? event.data.postings : [];
  return postings.filter(([account]) => account === houseAccount).reduce((sum, [, cents]) => sum + BigInt(cents), 0n);
}

/** Why a call and the wallet event paired with it disagree, or null. */
function disagreement(call, houseAccount) {
  const said = call.event.data;
  const { data } = call.money;
  const where = `(log position ${call.money.position})`;
  if (data.amount_cents !== said.amount_cents) {
    return `says ${formatCents(said.amount_cents)}, the wallet moved ${formatCents(data.amount_cents)} ${where}`;
  }
  if ((data.bonus_cents || 0) !== (said.bonus_cents || 0)) {
    return `says ${formatCents(said.bonus_cents || 0)} of bonus money, the wallet moved ${formatCents(data.bonus_cents || 0)} ${where}`;
  }
  const postings = Array.isArray(data.postings) ? data.postings : [];
  if (postings.reduce((sum, [, cents]) => sum + BigInt(cents), 0n) !== 0n) return `has postings that do not balance ${where}`;
  const house = housePosted(call.money, houseAccount);
  if (house !== -call.sign * BigInt(said.amount_cents)) {
    return `moved ${formatChange(house)} on ${houseAccount}, not ${formatChange(-call.sign * BigInt(said.amount_cents))} ${where}`;
  }
  return null;
}

/**
 * Whether the wallet moved what the calls say: each call has its own wallet event of the
 * same transaction id, amount and bonus part, balanced, posting the amount to the house's
 * side (casino:games:{provider}); no stake or credit of the round is left over. The
 * house's result is read off those postings. {state, title, detail}.
 */
export function checkCalls(round, events) {
  const houseAccount = `casino:games:${round.variant}`;
  const { calls, unpaired } = pairCalls(round, events);
  for (const call of calls) {
    const what = `the ${call.call} ${call.event.data.transaction_id} (log position ${call.event.position})`;
    if (!call.money) return mismatch(`${what} moved no money in the wallet`);
    const problem = disagreement(call, houseAccount);
    if (problem) return mismatch(`${what} ${problem}`);
  }
  if (unpaired.length) {
    const [first] = unpaired;
    return mismatch(`the wallet event at log position ${first.position} (${first.type} ${first.data.transaction_id}) answers no call of the round`);
  }
  const sum = (call) => calls.filter((found) => found.call === call).reduce((total, found) => total + BigInt(found.event.data.amount_cents), 0n);
  const house = calls.reduce((total, call) => total + housePosted(call.money, houseAccount), 0n);
  return {
    state: 'verified',
    title: 'Verified',
    detail:
      `each of the ${calls.length} calls moved exactly its amount in the wallet; stakes ${formatCents(sum('bet'))} = ` +
      `rollbacks ${formatCents(sum('rollback'))} + wins ${formatCents(sum('win'))} + the house's result ${formatChange(house)} (on ${houseAccount})`,
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
