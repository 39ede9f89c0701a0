// Opens the auditor's pages in Debian's Chromium (playwright-core, no browser download)
// and reports what a person would see; tests/infra/test_audit_pages.py asserts on it.
//
//   node tests/browser/run.mjs SPEC.json RESULTS.json
//
// SPEC: {"base": "http://127.0.0.1:PORT", "screenshots": DIR, "scenarios": [...]}, each
// scenario {name, path, base?, key?, extract: {label: selector}, attributes?: {label: [selector,
// attribute]}, print?: bool, print_hidden?: [selector], follow?: selector,
// follow_extract?: {label: selector}}. `key` is typed into the key form, reached with
// the Tab key alone. Every scenario saves DIR/NAME.png (and, with print, NAME-print.png
// and NAME.pdf on A4).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const WAIT_MS = 20_000;
const TABS_MAX = 30;
const SETTLED = ['done', 'refused', 'error'];
const A4_WIDTH_PX = 794; // 210 mm at 96 px per inch

const [specPath, resultsPath] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, 'utf8'));

async function settledState(page, states) {
  await page.waitForFunction((wanted) => wanted.includes(document.body.dataset.state), states, { timeout: WAIT_MS });
  return page.evaluate(() => document.body.dataset.state);
}

async function texts(page, selectors = {}) {
  const found = {};
  for (const [label, selector] of Object.entries(selectors)) {
    found[label] = await page.$$eval(selector, (elements) => elements.map((element) => element.innerText.trim()));
  }
  return found;
}

async function attributes(page, wanted = {}) {
  const found = {};
  for (const [label, [selector, name]] of Object.entries(wanted)) {
    found[label] = await page.$$eval(selector, (elements, attribute) => elements.map((element) => element.getAttribute(attribute)), name);
  }
  return found;
}

/** Press Tab until the key field has the focus; how many presses it took, or null. */
async function tabToKey(page) {
  for (let presses = 1; presses <= TABS_MAX; presses += 1) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(() => document.activeElement && document.activeElement.id === 'key')) return presses;
  }
  return null;
}

function pdfFacts(path) {
  const text = readFileSync(path, 'latin1');
  const boxes = [...text.matchAll(/\/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]/g)];
  return {
    pages: (text.match(/\/Type\s*\/Page\b/g) || []).length,
    size_pt: boxes.length ? [Number(boxes[0][1]), Number(boxes[0][2])] : null,
  };
}

async function printed(page, scenario) {
  await page.emulateMedia({ media: 'print' });
  const hidden = {};
  for (const selector of scenario.print_hidden || []) {
    hidden[selector] = await page.$$eval(selector, (elements) =>
      elements.every((element) => getComputedStyle(element).display === 'none' || element.closest('[hidden]') !== null),
    );
  }
  await page.setViewportSize({ width: A4_WIDTH_PX, height: 1123 });
  await page.screenshot({ path: join(spec.screenshots, `${scenario.name}-print.png`), fullPage: true });
  const pdf = join(spec.screenshots, `${scenario.name}.pdf`);
  await page.pdf({ path: pdf, format: 'A4', preferCSSPageSize: true });
  await page.emulateMedia({ media: 'screen' });
  return { hidden, pdf, ...pdfFacts(pdf) };
}

async function run(context, scenario) {
  const page = await context.newPage();
  const seen = { console: [], requests: [] };
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') seen.console.push(message.text());
  });
  page.on('pageerror', (error) => seen.console.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    seen.requests.push({ url: request.url(), method: request.method(), authorization: request.headers().authorization || null });
  });
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (event) => {
      window.__violations.push(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  const started = Date.now();
  await page.goto((scenario.base || spec.base) + scenario.path);
  const result = { name: scenario.name };
  if (scenario.key !== undefined) {
    result.first_state = await settledState(page, ['needs-key', ...SETTLED]);
    result.tabs_to_key = await tabToKey(page);
    if (result.tabs_to_key !== null) {
      await page.keyboard.type(scenario.key);
      await page.keyboard.press('Enter');
    }
  }
  result.state = await settledState(page, scenario.key === undefined ? [...SETTLED, 'needs-key'] : SETTLED);
  result.url = page.url();
  result.texts = await texts(page, scenario.extract);
  result.attributes = await attributes(page, scenario.attributes);
  result.session_key = await page.evaluate(() => window.sessionStorage.getItem('casino-audit-key'));
  result.violations = await page.evaluate(() => window.__violations);
  await page.screenshot({ path: join(spec.screenshots, `${scenario.name}.png`), fullPage: true });
  if (scenario.print) result.print = await printed(page, scenario);
  if (scenario.follow) {
    await page.focus(scenario.follow);
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.href !== result.url, { timeout: WAIT_MS });
    result.followed = { state: await settledState(page, [...SETTLED, 'needs-key']), url: page.url() };
    result.followed.texts = await texts(page, scenario.follow_extract);
    await page.screenshot({ path: join(spec.screenshots, `${scenario.name}-followed.png`), fullPage: true });
  }
  result.console = seen.console;
  result.requests = seen.requests;
  result.seconds = (Date.now() - started) / 1000;
  await page.close();
  return result;
}

const profile = mkdtempSync(join(tmpdir(), 'casino-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  args: FLAGS,
  viewport: { width: 1100, height: 900 },
});
const results = [];
try {
  for (const scenario of spec.scenarios) {
    try {
      results.push(await run(context, scenario));
    } catch (error) {
      results.push({ name: scenario.name, failure: String(error && error.stack ? error.stack : error) });
    }
  }
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
writeFileSync(resultsPath, JSON.stringify(results, null, 2));
