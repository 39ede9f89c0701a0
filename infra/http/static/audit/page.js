// The auditor's pages: asks for the key once per browser tab, reads the JSON routes with
// it, and shows the round page or the index. The page says what it is doing in
// body[data-state]: needs-key, loading, refused, error or done.

import { Failed, Refused, forgetKey, getJSON, rememberKey, storedKey, takeKeyFromFragment } from './api.js';
import { clear, h, setState } from './dom.js';
import { FILTERS, PAGE_ROWS, filtersOf, nextPage, roundsTable } from './index-view.js';
import { externalRecord } from './external-view.js';
import { roundRecord } from './round-view.js';

const $ = (id) => document.getElementById(id);
const EXTERNAL_LINKS = { '#fairness': 'Money check', '#bets': 'Calls' };

function say(text) {
  $('message').textContent = text;
}

function refuse(error) {
  forgetKey();
  const refusal = $('refusal');
  clear(refusal);
  refusal.append(
    h('strong', {}, 'The key was refused: '),
    `${error.message} (${error.status} ${error.code}). `,
    'Enter a key of the operator or auditor role.',
  );
  refusal.hidden = false;
  say('');
  askForKey();
  setState('refused');
}

function fail(error) {
  say('');
  const refusal = $('refusal');
  clear(refusal);
  const what = error instanceof Failed ? `${error.message} (${error.status} ${error.code})` : error.message;
  refusal.append(h('strong', {}, 'The record could not be read: '), what);
  refusal.hidden = false;
  setState('error');
}

function askForKey() {
  $('key-form').hidden = false;
  $('forget').hidden = true;
  setState('needs-key');
}

async function withKey(show) {
  const key = takeKeyFromFragment() || storedKey();
  if (!key) {
    askForKey();
    return;
  }
  rememberKey(key);
  $('key-form').hidden = true;
  $('forget').hidden = false;
  setState('loading');
  try {
    await show(key);
    setState('done');
  } catch (error) {
    if (error instanceof Refused) refuse(error);
    else fail(error);
  }
}

function provenance() {
  const when = new Date().toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  return `Read from ${window.location.origin} at ${when}.`;
}

async function showRound(key) {
  const roundId = decodeURIComponent(window.location.pathname.split('/').filter(Boolean).pop() || '');
  $('round-id').textContent = roundId;
  document.title = `Round ${roundId} \u2014 round record`;
  say('Reading the round\u2026');
  // The index entry first: it heads the record, and only operators and auditors may read it.
  const listed = await getJSON(`/v1/rounds?round_id=${encodeURIComponent(roundId)}`, key);
  const path = `/v1/rounds/${encodeURIComponent(roundId)}`;
  const [round, audit] = await Promise.all([getJSON(path, key), getJSON(`${path}/audit`, key)]);
  const external = round.game === 'external';
  say(external ? 'Checking the calls against the wallet\u2026' : 'Checking the cards against the seed\u2026');
  const record = await (external ? externalRecord : roundRecord)(round, listed.rounds[0] || null, audit);
  const content = $('content');
  clear(content);
  content.append(h('p', { id: 'provenance' }, provenance()), ...record.sections);
  content.hidden = false;
  // A provider's round has no cards and no decisions: no link to sections not shown.
  for (const link of $('contents').querySelectorAll('a')) {
    link.hidden = !document.getElementById(link.hash.slice(1));
    if (external && EXTERNAL_LINKS[link.hash]) link.textContent = EXTERNAL_LINKS[link.hash];
  }
  $('contents').hidden = false;
  const check = external ? 'Money check' : 'Fairness check';
  say(`Shown: round ${round.round_id}, ${round.status}. ${check}: ${record.verdict.title.toLowerCase()}.`);
}

async function showIndex(key) {
  const filters = filtersOf(window.location.search);
  for (const name of FILTERS) $(`filter-${name}`).value = filters.get(name) || '';
  $('filter').hidden = false;
  say('Reading the rounds\u2026');
  const query = new URLSearchParams(filters);
  query.set('limit', String(PAGE_ROWS));
  const answer = await getJSON(`/v1/rounds?${query}`, key);
  const content = $('content');
  clear(content);
  const next = nextPage(filters, answer);
  content.append(h('p', { id: 'provenance' }, provenance()), roundsTable(answer), ...(next ? [next] : []));
  content.hidden = false;
  const count = answer.rounds.length;
  say(`${count} ${count === 1 ? 'round' : 'rounds'} shown${next ? ', more on the next page' : ''}.`);
}

function start() {
  const show = document.body.dataset.page === 'round' ? showRound : showIndex;
  $('key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const key = $('key').value.trim();
    if (!key) return;
    rememberKey(key);
    $('key').value = '';
    $('refusal').hidden = true;
    withKey(show).then(() => $('content').hidden || $('record').focus());
  });
  $('forget').addEventListener('click', () => {
    forgetKey();
    window.location.reload();
  });
  $('print').addEventListener('click', () => window.print());
  withKey(show);
}

start();
