// The fairness check of docs/shuffle.md (fy-sha256-v1), re-done in the browser.
//
// Pure functions over plain values: no DOM, no network. SHA-256 comes from Web Crypto
// (crypto.subtle), which a browser offers only in a secure context (HTTPS, or
// localhost). tests/browser/verify.test.mjs runs this module under node against the
// test vectors of the Python shuffle (tests/domain/test_shoe.py).

export const ALGORITHM = 'fy-sha256-v1';
export const RANKS = ['A', '2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K'];
export const SUITS = ['S', 'H', 'D', 'C'];
export const DECKS_MAX = 8;
const SEED_HEX = /^[0-9a-fA-F]{64}$/;
const WORD_RANGE = 1n << 64n;
// A card as the server accepts it (domain/cards.py): a rank, upper or lower case,
// optionally followed by a suit letter, surrounding spaces ignored.
const CARD_TEXT = /^(10|[2-9]|[AaJjQqKk])([SsHhDdCc])?$/;

export class NoWebCrypto extends Error {}

// Bytes and hashes.

export function hexToBytes(hex) {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
    throw new Error(`not hexadecimal: ${hex.slice(0, 80)}`);
  }
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i += 1) {
    bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  }
  return bytes;
}

export function bytesToHex(bytes) {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

export function subtle() {
  const found = globalThis.crypto && globalThis.crypto.subtle;
  if (!found) {
    throw new NoWebCrypto(
      'this browser offers Web Crypto only on a secure page (HTTPS or localhost), ' +
        'so the seed cannot be checked here',
    );
  }
  return found;
}

export async function digest(algorithm, bytes) {
  return new Uint8Array(await subtle().digest(algorithm, bytes));
}

/** The 32 raw bytes of a seed written as 64 hexadecimal characters (step 1). */
export function seedBytes(seedHex) {
  if (typeof seedHex !== 'string' || !SEED_HEX.test(seedHex)) {
    throw new Error('a seed is 64 hexadecimal characters');
  }
  return hexToBytes(seedHex);
}

/** SHA-256 of the raw seed bytes, not of the hex text (step 2). */
export async function commitment(seedHex) {
  return bytesToHex(await digest('SHA-256', seedBytes(seedHex)));
}

// The generator (steps 3 and 4).

/** Four big-endian 64-bit words from each SHA-256(seed || 8-byte big-endian k) block. */
export class WordStream {
  constructor(seedHex) {
    this.seed = seedBytes(seedHex);
    this.block = 0n;
    this.words = [];
  }

  async next() {
    if (this.words.length === 0) {
      const input = new Uint8Array(this.seed.length + 8);
      input.set(this.seed);
      new DataView(input.buffer).setBigUint64(this.seed.length, this.block, false);
      this.block += 1n;
      const view = new DataView((await digest('SHA-256', input)).buffer);
      this.words = [0, 8, 16, 24].map((offset) => view.getBigUint64(offset, false));
    }
    return this.words.shift();
  }
}

/** A uniform BigInt in 0..n-1 (1 <= n <= 2**64), by rejection: no modulo bias. */
export async function uniformBelow(stream, n) {
  const bound = BigInt(n);
  if (bound < 1n || bound > WORD_RANGE) throw new RangeError(`n must lie in 1..2**64, not ${n}`);
  const limit = WORD_RANGE - (WORD_RANGE % bound);
  for (;;) {
    const word = await stream.next();
    if (word < limit) return word % bound;
  }
}

// Shoes (steps 5 and 6).

export function unshuffledShoe(decks) {
  if (!Number.isInteger(decks) || decks < 1 || decks > DECKS_MAX) {
    throw new Error(`a shoe holds 1 to ${DECKS_MAX} decks, not ${decks}`);
  }
  const deck = SUITS.flatMap((suit) => RANKS.map((rank) => rank + suit));
  return Array.from({ length: decks }, () => deck).flat();
}

/** A new list: Fisher-Yates from the end, j = uniform_below(i + 1). */
export async function shuffle(cards, seedHex) {
  const stream = new WordStream(seedHex);
  const shuffled = [...cards];
  for (let i = shuffled.length - 1; i > 0; i -= 1) {
    const j = Number(await uniformBelow(stream, i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
  }
  return shuffled;
}

/** "qh" -> "QH", " 10 " -> "10"; anything else is refused, as the server refuses it. */
export function parseCard(text) {
  const match = typeof text === 'string' ? CARD_TEXT.exec(text.trim()) : null;
  if (!match) throw new Error(`${JSON.stringify(text)} is not a card`);
  return match[1].toUpperCase() + (match[2] || '').toUpperCase();
}

export function rankOf(card) {
  return SUITS.includes(card.slice(-1)) && card.length > 1 ? card.slice(0, -1) : card;
}

/** The prefix in dealing order, then the rest of the shoe shuffled (step 6). */
export async function certificationShoe(prefix, seedHex, decks) {
  const requested = prefix.map(parseCard);
  const remaining = unshuffledShoe(decks);
  const chosen = new Array(requested.length);
  // Suited cards first, so that a bare rank never takes a card named later.
  requested.forEach((card, index) => {
    if (RANKS.includes(card)) return;
    const found = remaining.indexOf(card);
    if (found < 0) throw new Error(`a shoe of ${decks} decks holds only ${decks} of ${card}`);
    chosen[index] = remaining.splice(found, 1)[0];
  });
  requested.forEach((card, index) => {
    if (!RANKS.includes(card)) return;
    const found = remaining.findIndex((candidate) => rankOf(candidate) === card);
    if (found < 0) throw new Error(`a shoe of ${decks} decks has no card of rank ${card} left`);
    chosen[index] = remaining.splice(found, 1)[0];
  });
  return [...chosen, ...(await shuffle(remaining, seedHex))];
}

/** The shoe a round committed to: its certification prefix, if any, then the shuffle. */
export async function committedShoe(seedHex, decks, prefix = []) {
  if (prefix.length > 0) return certificationShoe(prefix, seedHex, decks);
  return shuffle(unshuffledShoe(decks), seedHex);
}

// What the audit trail says was dealt.

/**
 * Every card the round's own events dealt, each with its shoe position: an event whose
 * data has a `position` and a `card`, a `hole_card` (null while face down) or a list of
 * `cards` (the first at `position`). Any game that records its cards so is covered.
 * A blackjack hole card is stored face down and turned over by `HoleCardRevealed`,
 * which deals no card of its own: it names the card of the hole where it lies.
 */
export function dealtCards(events, roundId) {
  const dealt = [];
  const turned = new Map();
  for (const event of events) {
    if (event.aggregate_id === roundId && event.type === 'HoleCardRevealed') turned.set(event.data.position, event.data.hole_card);
  }
  for (const event of events) {
    const data = event.data || {};
    if (event.aggregate_id !== roundId || !Number.isInteger(data.position)) continue;
    if (event.type === 'HoleCardRevealed') continue;
    let cards = null;
    if ('card' in data) cards = [data.card];
    else if ('hole_card' in data) cards = [data.hole_card ?? turned.get(data.position) ?? null];
    else if (Array.isArray(data.cards)) cards = data.cards;
    if (cards === null) continue;
    cards.forEach((card, offset) => {
      dealt.push({ position: data.position + offset, card, event, offset });
    });
  }
  return dealt;
}

// Where each card went, by game: labels, marks and the card the round's answer shows.

const BACCARAT_HANDS = { player: 'Player', banker: 'Banker' };
const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh'];

export function placeCards(round, dealt) {
  if (round.game === 'baccarat') return placeBaccarat(round, dealt);
  if (round.game === 'blackjack') return placeBlackjack(round, dealt);
  return [
    {
      key: 'shoe',
      label: 'Cards in shoe order',
      cards: [...dealt]
        .sort((a, b) => a.position - b.position)
        .map((entry) => ({ ...entry, mark: entry.event.type, shown: undefined })),
    },
  ];
}

function placeBaccarat(round, dealt) {
  const groups = Object.entries(BACCARAT_HANDS).map(([key, label]) => ({
    key,
    label: `${label} hand`,
    cards: [],
  }));
  const other = { key: 'other', label: 'Other cards', cards: [] };
  for (const entry of dealt) {
    const group = groups.find((candidate) => candidate.key === entry.event.data.hand) || other;
    const index = group.cards.length;
    const third = entry.event.type === 'ThirdCardDrawn';
    const hand = (round.hands || {})[group.key];
    group.cards.push({
      ...entry,
      mark: third ? 'third card' : `${ORDINALS[index] || `#${index + 1}`} card`,
      third,
      shown: hand ? hand.cards[index] : undefined,
    });
  }
  return other.cards.length ? [...groups, other] : groups;
}

function placeBlackjack(round, dealt) {
  const dealer = { key: 'dealer', label: 'Dealer', cards: [] };
  const boxes = new Map(); // box number -> list of hands (lists of placed cards)
  const handOf = (box, hand) => {
    if (!boxes.has(box)) boxes.set(box, [[]]);
    const hands = boxes.get(box);
    while (hands.length <= hand) hands.push([]);
    return hands[hand];
  };
  const other = [];
  for (const entry of dealt) {
    const { type, data } = entry.event;
    if (type === 'CardDealt' && data.box === null) dealer.cards.push({ ...entry, mark: 'up card' });
    else if (type === 'HoleCardDealt') dealer.cards.push({ ...entry, mark: 'hole card', hole: true });
    else if (type === 'DealerDrew') dealer.cards.push({ ...entry, mark: 'dealer draw', draw: true });
    else if (type === 'CardDealt') {
      const hand = handOf(data.box, 0);
      hand.push({ ...entry, mark: `${ORDINALS[hand.length]} card` });
    } else if (type === 'PlayerActed' && data.action === 'split') {
      // Each hand keeps one of the pair and takes its second card at once.
      const hands = boxes.get(data.box) || [[]];
      const pair = hands[data.hand] || [];
      const split = { ...entry, mark: 'split: second card', by: data.by };
      if (entry.offset === 0) {
        const moved = pair[1] && { ...pair[1], mark: `${pair[1].mark}, split off` };
        boxes.set(data.box, [[pair[0], split].filter(Boolean), [moved].filter(Boolean)]);
      } else {
        handOf(data.box, 1).push(split);
      }
    } else if (type === 'PlayerActed') {
      handOf(data.box, data.hand).push({ ...entry, mark: data.action, by: data.by, draw: true });
    } else other.push({ ...entry, mark: type });
  }
  const shownDealer = (round.dealer || {}).cards || [];
  dealer.cards = dealer.cards.map((card, index) => ({ ...card, shown: shownDealer[index] }));
  const groups = [dealer];
  for (const [box, hands] of [...boxes.entries()].sort((a, b) => a[0] - b[0])) {
    const shownBox = (round.boxes || []).find((candidate) => candidate.box === box);
    hands.forEach((cards, hand) => {
      const shownHand = shownBox && shownBox.hands[hand] ? shownBox.hands[hand].cards : [];
      groups.push({
        key: `box-${box}-${hand}`,
        label: hands.length > 1 ? `Box ${box}, hand ${hand + 1}` : `Box ${box}`,
        cards: cards.map((card, index) => ({ ...card, shown: shownHand[index] })),
      });
    });
  }
  if (other.length) groups.push({ key: 'other', label: 'Other cards', cards: other });
  return groups;
}

/** The cards the round's answer shows, hand by hand, that no event accounts for. */
export function unaccountedShown(round, groups) {
  const placed = new Map(groups.map((group) => [group.key, group.cards.length]));
  const extra = [];
  const compare = (key, label, cards) => {
    (cards || []).slice(placed.get(key) || 0).forEach((card) => extra.push({ label, card }));
  };
  if (round.game === 'baccarat') {
    for (const [key, label] of Object.entries(BACCARAT_HANDS)) {
      compare(key, `${label} hand`, ((round.hands || {})[key] || {}).cards);
    }
  } else if (round.game === 'blackjack') {
    compare('dealer', 'Dealer', (round.dealer || {}).cards);
    for (const box of round.boxes || []) {
      box.hands.forEach((hand, index) => {
        const label = box.hands.length > 1 ? `Box ${box.box}, hand ${index + 1}` : `Box ${box.box}`;
        compare(`box-${box.box}-${index}`, label, hand.cards);
      });
    }
  }
  return extra;
}

// The verdict.

const FINISHED = ['settled', 'voided'];

function opening(round, events) {
  return events.find((event) => event.aggregate_id === round.round_id && event.type === 'Opened');
}

/** The event that ended the round (Settled or Voided), which reveals its secrets. */
function ending(round, events) {
  return events.find((event) => event.aggregate_id === round.round_id && ['Settled', 'Voided'].includes(event.type));
}

/** The certification shoe: revealed by the round's ending since seeds are sealed (rules.md 5),
 * in its opening before. */
function chosenShoe(round, events) {
  const ended = ending(round, events);
  const opened = opening(round, events);
  return (ended && ended.data.shoe_prefix) || (opened && opened.data.shoe_prefix) || [];
}

/**
 * Check the round against its seed: the commitment, then every card dealt, in shoe order.
 * Returns {state, title, detail, shoe, checks, facts}: state is "verified", "mismatch",
 * "pending" (the seed is not revealed yet) or "unavailable" (this page cannot check it);
 * `checks` maps each shoe position dealt to {expected, ok}.
 */
export async function checkRound(round, events, groups) {
  const opened = opening(round, events);
  const facts = {
    algorithm: round.shuffle_algorithm || (opened && opened.data.shuffle_algorithm),
    commitment: round.seed_commitment || (opened && opened.data.seed_commitment),
    seed: round.seed || null,
    decks: round.decks || (opened && opened.data.decks),
    prefix: chosenShoe(round, events),
    openedAt: opened ? opened.position : null,
  };
  const result = (state, title, detail, extra = {}) => ({ state, title, detail, facts, checks: new Map(), ...extra });
  if (facts.algorithm !== ALGORITHM) {
    return result('unavailable', 'Cannot be checked here', `this page knows the ${ALGORITHM} shuffle, not ${facts.algorithm}`);
  }
  if (!facts.seed) {
    const why = FINISHED.includes(round.status)
      ? 'the round is over but its answer reveals no seed'
      : 'the seed stays secret until the round is over (rules.md 5)';
    return result(
      FINISHED.includes(round.status) ? 'mismatch' : 'pending',
      FINISHED.includes(round.status) ? 'Mismatch' : 'Cannot be checked yet',
      `${why}; the commitment published when it opened is ${facts.commitment}`,
    );
  }
  const seedProblem = await seedMismatch(round, events, facts, opened);
  if (seedProblem) return result('mismatch', 'Mismatch', seedProblem);
  facts.seedHash = await commitment(facts.seed);
  let shoe;
  try {
    shoe = await committedShoe(facts.seed, facts.decks, facts.prefix);
  } catch (error) {
    return result('mismatch', 'Mismatch', `the shoe cannot be re-derived: ${error.message}`);
  }
  return { facts, ...compareCards(round, groups, shoe, facts) };
}

async function seedMismatch(round, events, facts, opened) {
  if (!SEED_HEX.test(facts.seed)) return 'the revealed seed is not 64 hexadecimal characters';
  const hashed = await commitment(facts.seed);
  if (hashed !== facts.commitment) {
    return `SHA-256 of the revealed seed is ${hashed}, not the commitment ${facts.commitment} published when the round opened`;
  }
  if (!opened) return 'the audit trail holds no Opened event for the round';
  if (opened.data.seed_commitment !== facts.commitment) {
    return `the Opened event (log position ${opened.position}) commits to ${opened.data.seed_commitment}, the round's answer to ${facts.commitment}`;
  }
  for (const event of events) {
    const revealed = event.aggregate_id === round.round_id ? event.data.seed : undefined;
    if (typeof revealed === 'string' && revealed !== facts.seed) {
      return `the ${event.type} event (log position ${event.position}) reveals the seed ${revealed}, the round's answer ${facts.seed}`;
    }
  }
  return null;
}

function compareCards(round, groups, shoe, facts) {
  const placed = groups.flatMap((group) => group.cards.map((card) => ({ ...card, group })));
  placed.sort((a, b) => a.position - b.position || a.event.position - b.event.position);
  const checks = new Map();
  let first = null;
  placed.forEach((card, index) => {
    const expected = shoe[card.position];
    const problem = cardProblem(card, index, expected, placed);
    checks.set(card.position, { expected, ok: problem === null });
    if (problem !== null && first === null) first = problem;
  });
  const extra = unaccountedShown(round, groups);
  if (first === null && extra.length > 0) {
    first = `the round's answer shows ${extra[0].card} in the ${extra[0].label}, which no event of the audit trail dealt`;
  }
  if (first !== null) return { state: 'mismatch', title: 'Mismatch', detail: first, shoe, checks };
  const cards =
    placed.length === 0
      ? 'no card was dealt'
      : `each of the ${placed.length} cards dealt is the card at its position in the shoe re-derived from it`;
  const prefix = facts.prefix.length
    ? ` This is a certification round: its first ${facts.prefix.length} cards were chosen in test mode (${facts.prefix.join(' ')}); only the rest was shuffled.`
    : '';
  const detail = `SHA-256 of the revealed seed is the commitment published when the round opened, and ${cards} (${ALGORITHM}, ${facts.decks} decks).${prefix}`;
  return { state: 'verified', title: 'Verified', detail, shoe, checks };
}

function cardProblem(card, index, expected, placed) {
  const where = `shoe position ${card.position} (${card.group.label}, ${card.mark}; ${card.event.type} at log position ${card.event.position})`;
  if (index > 0 && placed[index - 1].position === card.position) {
    return `two cards were dealt from shoe position ${card.position}`;
  }
  if (card.position !== index) return `no card was dealt from shoe position ${index}, yet later ones were`;
  if (card.card === null) return `${where}: the card is still face down although the seed is revealed`;
  if (card.card !== expected) {
    return `${where}: the audit trail records ${card.card}, the shoe re-derived from the seed holds ${expected}`;
  }
  if (card.shown !== undefined && card.shown !== expected) {
    return `${where}: the round's answer shows ${card.shown}, the shoe re-derived from the seed holds ${expected}`;
  }
  return null;
}
