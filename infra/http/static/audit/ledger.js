// The money of a round, from its audit trail: each participant's holds, results and
// commission, with the balance before and after, and every ledger line with its log
// position. Pure functions over plain values, like verify.js.

import { bytesToHex, digest, hexToBytes } from './verify.js';

// domain/ids.py: a wallet's id is uuid5(NAMESPACE, "wallet/{player_id}/{mode}"). The
// namespace never changes (that would orphan every stored aggregate).
const NAMESPACE = '6f1d3c8e-2b0a-4f55-9a53-0c6b0d2a7e41';
const MONEY_EVENTS = ['RoundSettled', 'CommissionCharged'];
export const WALLET_TOPIC = 'casino:Wallet.';

/** Integer cents as the API writes money: "-1234.05". */
export function formatCents(cents) {
  const value = BigInt(cents);
  const magnitude = value < 0n ? -value : value;
  const whole = magnitude / 100n;
  const fraction = (magnitude % 100n).toString().padStart(2, '0');
  return `${value < 0n ? '-' : ''}${whole}.${fraction}`;
}

/** The same as a signed change: "+9.82", "-10.00", "0.00". */
export function formatChange(cents) {
  return BigInt(cents) > 0n ? `+${formatCents(cents)}` : formatCents(cents);
}

/** uuid5 as Python's uuid.uuid5 makes it: SHA-1 of the namespace bytes and the name. */
export async function uuid5(namespace, name) {
  const space = hexToBytes(namespace.replaceAll('-', ''));
  const text = new TextEncoder().encode(name);
  const input = new Uint8Array(space.length + text.length);
  input.set(space);
  input.set(text, space.length);
  const hash = (await digest('SHA-1', input)).slice(0, 16);
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = bytesToHex(hash);
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join('-');
}

export function walletId(playerId, mode) {
  return uuid5(NAMESPACE, `wallet/${playerId}/${mode}`);
}

/** Who took part: from the round index's entry if there is one, else from the answer. */
export function participantsOf(round, entry) {
  if (entry && Array.isArray(entry.players) && entry.players.length > 0) {
    return entry.players.map(({ player_id: id, role }) => ({ id, role }));
  }
  const found = [];
  if (round.player_id) found.push({ id: round.player_id, role: 'player' });
  if (round.dealer_id) found.push({ id: round.dealer_id, role: 'dealer' });
  return found;
}

function ownChange(data, account) {
  const postings = Array.isArray(data.postings) ? data.postings : [];
  return postings
    .filter(([name]) => name === account)
    .reduce((sum, [, cents]) => sum + BigInt(cents), 0n);
}

function accountFromPostings(data) {
  const postings = Array.isArray(data.postings) ? data.postings : [];
  const own = postings.find(([name]) => typeof name === 'string' && name.startsWith('player:'));
  return own ? own[0] : null;
}

/** One ledger line of a wallet event of the round: what it did to the balance or holds. */
function ledgerLine(event, who) {
  const { data, type } = event;
  const line = { event, who, kind: type, change: null, balanceAfter: null, balanceBefore: null, held: null };
  // A stake's bonus part (rules.md 9) is held beside its cash part, and released alike.
  if (type === 'FundsHeld' || type === 'BonusHeld') line.held = BigInt(data.amount_cents);
  else if (type === 'HoldReleased' || type === 'BonusReleased') line.held = -BigInt(data.amount_cents);
  if (Number.isInteger(data.balance_after_cents) && who.account) {
    line.change = ownChange(data, who.account);
    line.balanceAfter = BigInt(data.balance_after_cents);
    line.balanceBefore = line.balanceAfter - line.change;
  }
  if (type === 'RoundSettled' || type === 'BonusSettled') line.held = -BigInt(data.released_cents || 0);
  if (type === 'BonusSettled') line.bonusNet = BigInt(data.net_cents);
  if (type === 'PointsChanged') line.points = { change: data.change, after: data.points_after };
  return line;
}

/**
 * Each participant's books for the round, and every ledger line in log order. A wallet
 * is told by its id; one that belongs to nobody listed is named by its postings.
 */
export async function roundBooks(round, entry, events) {
  const books = participantsOf(round, entry).map((person) => ({ ...person, account: `player:${person.id}`, lines: [] }));
  const byWallet = new Map();
  const byAccount = new Map(books.map((book) => [book.account, book]));
  for (const book of books) {
    try {
      byWallet.set(await walletId(book.id, round.mode), book);
    } catch {
      // No Web Crypto here: the wallet is found by the postings of its events instead.
    }
  }
  const lines = [];
  for (const event of events.filter((candidate) => candidate.topic.startsWith(WALLET_TOPIC))) {
    let book = byWallet.get(event.aggregate_id);
    if (!book) {
      const account = accountFromPostings(event.data);
      book = account ? byAccount.get(account) : undefined;
      if (!book) {
        const id = account ? account.slice('player:'.length) : `wallet ${event.aggregate_id.slice(0, 8)}`;
        book = { id, role: 'not listed', account, lines: [] };
        books.push(book);
        if (account) byAccount.set(account, book);
      }
      byWallet.set(event.aggregate_id, book);
    }
    const line = ledgerLine(event, book);
    book.lines.push(line);
    lines.push(line);
  }
  return { books: books.map(summarise), lines };
}

function summarise(book) {
  const money = book.lines.filter((line) => line.balanceAfter !== null);
  const commission = book.lines
    .filter((line) => line.kind === 'CommissionCharged')
    .reduce((sum, line) => sum + BigInt(line.event.data.commission_cents), 0n);
  const held = book.lines.reduce((sum, line) => sum + (line.held || 0n), 0n);
  const points = book.lines.filter((line) => line.points).reduce((sum, line) => sum + BigInt(line.points.change), 0n);
  const settled = book.lines.some((line) => MONEY_EVENTS.includes(line.kind));
  const bonusNet = book.lines.reduce((sum, line) => sum + (line.bonusNet || 0n), 0n);
  return {
    ...book,
    before: money.length ? money[0].balanceBefore : null,
    after: money.length ? money[money.length - 1].balanceAfter : null,
    net: money.length ? money[money.length - 1].balanceAfter - money[0].balanceBefore : null,
    commission,
    stillHeld: held,
    points,
    settled,
    bonusNet,
  };
}
