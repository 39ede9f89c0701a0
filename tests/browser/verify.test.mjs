// The auditor's page re-derives shoes in JavaScript: it must agree with the Python
// shuffle card for card. Run by tests/infra/http/test_audit_verify_js.py, which writes the
// vectors (the published ones of docs/shuffle.md, and shoes computed by domain/shoe.py)
// to the file named by VECTORS.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import {
  WordStream,
  certificationShoe,
  checkRound,
  commitment,
  committedShoe,
  dealtCards,
  parseCard,
  placeCards,
  shuffle,
  uniformBelow,
  unshuffledShoe,
} from '../../infra/http/static/audit/verify.js';
import { formatCents, roundBooks, walletId } from '../../infra/http/static/audit/ledger.js';
import { checkCalls } from '../../infra/http/static/audit/external-view.js';

const vectors = JSON.parse(readFileSync(process.env.VECTORS, 'utf8'));

test('the commitment is the SHA-256 of the raw seed bytes', async () => {
  assert.equal(await commitment(vectors.seed), vectors.commitment);
  assert.equal(await commitment(vectors.seed.toUpperCase()), vectors.commitment);
});

test('a seed that is not 64 hexadecimal characters is refused', async () => {
  for (const seed of vectors.bad_seeds) {
    await assert.rejects(commitment(seed), /64 hexadecimal/);
  }
});

test('the generator reads SHA-256 blocks of seed and counter as big-endian words', async () => {
  const stream = new WordStream(vectors.seed);
  const words = [];
  for (let i = 0; i < 5; i += 1) words.push((await stream.next()).toString());
  assert.deepEqual(words, vectors.first_words);
});

test('uniform_below rejects the words that would bias the modulo', async () => {
  const stream = new WordStream(vectors.seed);
  const draws = [];
  for (let i = 0; i < vectors.biased_draws.length; i += 1) {
    draws.push((await uniformBelow(stream, BigInt(vectors.biased_n))).toString());
  }
  assert.deepEqual(draws, vectors.biased_draws);
});

test('the unshuffled shoe is deck after deck, suit by suit, rank by rank', () => {
  assert.deepEqual(unshuffledShoe(2), vectors.unshuffled_two_decks);
});

test('the shoes match the published test vector', async () => {
  assert.deepEqual((await shuffle(unshuffledShoe(6), vectors.seed)).slice(0, 20), vectors.six_decks_first_20);
  assert.deepEqual((await shuffle(unshuffledShoe(8), vectors.seed)).slice(0, 20), vectors.eight_decks_first_20);
});

test('whole shoes of every size agree with the Python shuffle, card for card', async () => {
  for (const { seed, decks, shoe } of vectors.shoes) {
    assert.deepEqual(await committedShoe(seed, decks), shoe, `${decks} decks, seed ${seed}`);
  }
});

test('certification shoes deal the prefix first, as the Python code does', async () => {
  for (const { prefix, decks, shoe } of vectors.certification) {
    assert.deepEqual(await certificationShoe(prefix, vectors.seed, decks), shoe, prefix.join(','));
  }
});

test('a prefix the shoe cannot hold is refused', async () => {
  for (const { prefix, decks } of vectors.impossible_prefixes) {
    await assert.rejects(certificationShoe(prefix, vectors.seed, decks), /holds only|no card/);
  }
});

test('cards are read as the server reads them', () => {
  assert.deepEqual(['qh', ' 10 ', 'Ks', 'a', '10D'].map(parseCard), ['QH', '10', 'KS', 'A', '10D']);
  for (const bad of ['1', '11', 'QX', '', 'Q H', 7]) assert.throws(() => parseCard(bad));
});

test('money is written as the API writes it', () => {
  for (const [cents, text] of vectors.money) assert.equal(formatCents(cents), text);
});

test('wallet ids are the uuid5 of domain/ids.py', async () => {
  for (const { player_id: player, mode, wallet_id: id } of vectors.wallets) {
    assert.equal(await walletId(player, mode), id);
  }
});

// A settled house round, as the API answers it, to check the verdict on.
const SEED = vectors.seed;
const ROUND_ID = 'r-1';

function baccaratRound(shoe, overrides = {}) {
  const cards = (...positions) => positions.map((position) => shoe[position]);
  return {
    round_id: ROUND_ID,
    game: 'baccarat',
    status: 'settled',
    mode: 'real',
    player_id: 'alice',
    seed: SEED,
    seed_commitment: vectors.commitment,
    shuffle_algorithm: 'fy-sha256-v1',
    decks: 8,
    hands: { player: { cards: cards(0, 2) }, banker: { cards: cards(1, 3) } },
    ...overrides,
  };
}

function trail(shoe, card = (position) => shoe[position]) {
  const event = (position, type, data) => ({ position, aggregate_id: ROUND_ID, type, data, topic: `casino:BaccaratRound.${type}` });
  return [
    event(10, 'Opened', { seed: SEED, seed_commitment: vectors.commitment, shoe_prefix: [], decks: 8 }),
    ...['player', 'banker', 'player', 'banker'].map((hand, position) =>
      event(11 + position, 'CardDealt', { hand, card: card(position), position }),
    ),
    event(15, 'Settled', { seed: SEED }),
  ];
}

async function verdict(round, events) {
  return checkRound(round, events, placeCards(round, dealtCards(events, ROUND_ID)));
}

test('a round dealt from its shoe is verified', async () => {
  const shoe = await committedShoe(SEED, 8);
  const result = await verdict(baccaratRound(shoe), trail(shoe));
  assert.equal(result.state, 'verified', result.detail);
});

test('a card the shoe does not hold there is the first mismatch named', async () => {
  const shoe = await committedShoe(SEED, 8);
  const other = shoe.find((card) => card !== shoe[2]);
  const events = trail(shoe, (position) => (position === 2 ? other : shoe[position]));
  const result = await verdict(baccaratRound(shoe), events);
  assert.equal(result.state, 'mismatch');
  assert.match(result.detail, new RegExp(`^shoe position 2 \\(Player hand, second card; CardDealt at log position 13\\): the audit trail records ${other}, the shoe re-derived from the seed holds ${shoe[2]}`));
});

test("the round's answer is checked as well as its events", async () => {
  const shoe = await committedShoe(SEED, 8);
  const other = shoe.find((card) => card !== shoe[1]);
  const round = baccaratRound(shoe, { hands: { player: { cards: [shoe[0], shoe[2]] }, banker: { cards: [other, shoe[3]] } } });
  const result = await verdict(round, trail(shoe));
  assert.equal(result.state, 'mismatch');
  assert.match(result.detail, new RegExp(`the round's answer shows ${other}`));
});

test('a seed that does not match the commitment is a mismatch', async () => {
  const shoe = await committedShoe(SEED, 8);
  const round = baccaratRound(shoe, { seed: '00'.repeat(32) });
  const result = await verdict(round, trail(shoe));
  assert.equal(result.state, 'mismatch');
  assert.match(result.detail, /not the commitment/);
});

test('before the reveal the round cannot be checked yet', async () => {
  const shoe = await committedShoe(SEED, 8);
  const round = baccaratRound(shoe, { seed: null, status: 'open', hands: { player: { cards: [] }, banker: { cards: [] } } });
  const result = await verdict(round, trail(shoe).slice(0, 1));
  assert.equal(result.state, 'pending');
  assert.match(result.detail, new RegExp(vectors.commitment));
});

test('a skipped shoe position is a mismatch', async () => {
  const shoe = await committedShoe(SEED, 8);
  const events = trail(shoe).filter((event) => event.data.position !== 1);
  const round = baccaratRound(shoe, { hands: { player: { cards: [shoe[0], shoe[2]] }, banker: { cards: [shoe[3]] } } });
  const result = await verdict(round, events);
  assert.equal(result.state, 'mismatch');
  assert.match(result.detail, /no card was dealt from shoe position 1/);
});

test('a game the page does not know is verified by the positions in its events', async () => {
  const shoe = await committedShoe(SEED, 8);
  const round = { ...baccaratRound(shoe), game: 'roulette-of-cards', hands: undefined };
  const events = trail(shoe).map((event) => ({ ...event, type: event.type === 'CardDealt' ? 'Drawn' : event.type }));
  const groups = placeCards(round, dealtCards(events, ROUND_ID));
  assert.deepEqual(groups[0].cards.map((card) => card.card), shoe.slice(0, 4));
  assert.equal((await checkRound(round, events, groups)).state, 'verified');
});

test('blackjack cards are placed by box and hand, a split giving each hand its second card', () => {
  const event = (position, type, data) => ({ position, aggregate_id: ROUND_ID, type, data, topic: `casino:BlackjackRound.${type}` });
  const events = [
    event(1, 'CardDealt', { box: 1, card: '8S', position: 0 }),
    event(2, 'CardDealt', { box: null, card: '6H', position: 1 }),
    event(3, 'CardDealt', { box: 1, card: '8D', position: 2 }),
    event(4, 'HoleCardDealt', { hole_card: '10C', position: 3 }),
    event(5, 'PlayerActed', { box: 1, hand: 0, action: 'split', cards: ['3S', 'KH'], position: 4, by: 'player' }),
    event(6, 'PlayerActed', { box: 1, hand: 0, action: 'hit', cards: ['9C'], position: 6, by: 'player' }),
    event(7, 'DealerDrew', { card: '5D', position: 7 }),
  ];
  const round = { game: 'blackjack', boxes: [{ box: 1, hands: [{ cards: ['8S', '3S', '9C'] }, { cards: ['8D', 'KH'] }] }], dealer: { cards: ['6H', '10C', '5D'] } };
  const groups = placeCards(round, dealtCards(events, ROUND_ID));
  const view = groups.map((group) => [group.label, group.cards.map((card) => `${card.card}@${card.position}:${card.mark}`)]);
  assert.deepEqual(view, [
    ['Dealer', ['6H@1:up card', '10C@3:hole card', '5D@7:dealer draw']],
    ['Box 1, hand 1', ['8S@0:first card', '3S@4:split: second card', '9C@6:hit']],
    ['Box 1, hand 2', ['8D@2:second card, split off', 'KH@5:split: second card']],
  ]);
  assert.ok(groups.every((group) => group.cards.every((card) => card.shown === card.card)));
});

test('a hole card stored face down is placed as the card HoleCardRevealed turned over', () => {
  const event = (position, type, data) => ({ position, aggregate_id: ROUND_ID, type, data, topic: `casino:BlackjackRound.${type}` });
  const events = [
    event(1, 'CardDealt', { box: 1, card: '9S', position: 0 }),
    event(2, 'CardDealt', { box: null, card: '6H', position: 1 }),
    event(3, 'CardDealt', { box: 1, card: '8D', position: 2 }),
    event(4, 'HoleCardDealt', { hole_card: null, position: 3 }),
    event(5, 'PlayerActed', { box: 1, hand: 0, action: 'stand', cards: [], position: 4, by: 'player' }),
    event(6, 'HoleCardRevealed', { hole_card: '10C', position: 3 }),
    event(7, 'DealerDrew', { card: '5D', position: 4 }),
  ];
  const dealt = dealtCards(events, ROUND_ID);
  assert.deepEqual(dealt.map((card) => `${card.card}@${card.position}:${card.event.type}`), [
    '9S@0:CardDealt', '6H@1:CardDealt', '8D@2:CardDealt', '10C@3:HoleCardDealt', '5D@4:DealerDrew',
  ]);
  const round = { game: 'blackjack', boxes: [{ box: 1, hands: [{ cards: ['9S', '8D'] }] }], dealer: { cards: ['6H', '10C', '5D'] } };
  const [dealer] = placeCards(round, dealt);
  assert.deepEqual(dealer.cards.map((card) => `${card.card}:${card.mark}`), ['6H:up card', '10C:hole card', '5D:dealer draw']);
});

test("each participant's balance before and after comes from the wallet events", async () => {
  const pat = await walletId('pat', 'real');
  const dan = await walletId('dan', 'real');
  const wallet = (position, aggregate, type, data) => ({ position, aggregate_id: aggregate, type, data, topic: `casino:Wallet.${type}` });
  const events = [
    wallet(1, dan, 'FundsHeld', { amount_cents: 180350 }),
    wallet(2, pat, 'FundsHeld', { amount_cents: 1000 }),
    wallet(3, pat, 'RoundSettled', { net_cents: -1000, released_cents: 1000, postings: [['player:pat', -1000]], balance_after_cents: 9000 }),
    wallet(4, dan, 'RoundSettled', { net_cents: 1000, released_cents: 180350, postings: [['player:dan', 1000]], balance_after_cents: 201000 }),
    wallet(5, dan, 'CommissionCharged', { commission_cents: 18, postings: [['player:dan', -18], ['casino:commission', 18]], balance_after_cents: 200982 }),
  ];
  const round = { mode: 'real', player_id: 'pat', dealer_id: 'dan' };
  const { books, lines } = await roundBooks(round, null, events);
  const view = books.map((book) => [book.id, book.role, formatCents(book.before), formatCents(book.after), formatCents(book.commission), book.stillHeld]);
  assert.deepEqual(view, [
    ['pat', 'player', '100.00', '90.00', '0.00', 0n],
    ['dan', 'dealer', '2000.00', '2009.82', '0.18', 0n],
  ]);
  assert.deepEqual(lines.map((line) => line.who.id), ['dan', 'pat', 'pat', 'dan', 'dan']);
});

// A provider's round (rules.md 10): the page checks each call against the wallet event
// that moved its money.
const SLOT = { round_id: 'r-1', variant: 'acme' };
const HOUSE = 'casino:games:acme';
const call = (position, type, data) => ({ position, aggregate_id: 'r-1', type, topic: `casino:ProviderRound.${type}`, data });
const move = (position, type, data) => ({ position, aggregate_id: 'w-1', type, topic: `casino:Wallet.${type}`, data: { round_id: 'r-1', ...data } });
const stake = (position, id, cents, bonus = 0) =>
  move(position, 'StakeTaken', { transaction_id: id, amount_cents: cents, bonus_cents: bonus, postings: [['player:sam', bonus - cents], ['bonus:sam', -bonus], [HOUSE, cents]] });
const credit = (position, id, kind, cents) =>
  move(position, 'Credited', { transaction_id: id, kind, amount_cents: cents, bonus_cents: 0, postings: [['player:sam', cents], [HOUSE, -cents]] });
const PLAYED = [
  call(1, 'BetTaken', { transaction_id: 'b1', amount_cents: 1000, bonus_cents: 400 }),
  stake(2, 'b1', 1000, 400),
  call(3, 'WinPaid', { transaction_id: 'w1', amount_cents: 2500, bonus_cents: 0 }),
  credit(4, 'w1', 'win', 2500),
  call(5, 'Ended', { reason: 'provider' }),
  move(6, 'BonusWagered', { bonus_id: 'x', wagered_cents: 1000 }),
  move(7, 'BonusConverted', { bonus_id: 'x', converted_cents: 100 }),
];

test("a provider's round is verified call by call, its wagering and conversion answering none", () => {
  const found = checkCalls(SLOT, PLAYED);
  assert.equal(found.state, 'verified', found.detail);
  assert.match(found.detail, /stakes 10\.00 = rollbacks 0\.00 \+ wins 25\.00 \+ the house's result -15\.00 \(on casino:games:acme\)$/);
});

test('a call recorded twice finds no second wallet event', () => {
  const twice = [...PLAYED, call(8, 'WinPaid', { transaction_id: 'w1', amount_cents: 2500, bonus_cents: 0 })];
  const found = checkCalls(SLOT, twice);
  assert.equal(found.state, 'mismatch');
  assert.match(found.detail, /^the win w1 \(log position 8\) moved no money in the wallet$/);
});

test("a call and its wallet event rewritten alike still disagree with the house's posting", () => {
  const rewritten = PLAYED.map((event) => (event.position === 3 || event.position === 4 ? { ...event, data: { ...event.data, amount_cents: 9900 } } : event));
  const found = checkCalls(SLOT, rewritten);
  assert.equal(found.state, 'mismatch');
  assert.match(found.detail, /moved -25\.00 on casino:games:acme, not -99\.00/);
});

test("a stake's bonus part must be the call's", () => {
  const other = PLAYED.map((event) => (event.position === 2 ? stake(2, 'b1', 1000, 300) : event));
  assert.match(checkCalls(SLOT, other).detail, /says 4\.00 of bonus money, the wallet moved 3\.00/);
});
