// The API reference at /docs in a real browser: Debian's headless Chromium
// driven by playwright-core (installed by ./dev under .tools/docs-test/).
// Opens the page, checks every operation and schema of openapi.yaml is
// rendered, authorizes with a dev token, calls GET /users/me and places an
// order through Swagger UI's "Try it out", and checks the answers shown.
//
//   node tools/docs_browser_test.mjs <base-url> <token> <screenshot.png>
//
// Exits non-zero on the first failed step.
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, '.tools/docs-test/node_modules/'));
const { chromium } = require('playwright-core');

const [base, token, screenshot] = process.argv.slice(2);
if (!base || !token || !screenshot) {
  console.error('usage: node tools/docs_browser_test.mjs <base-url> <token> <screenshot.png>');
  process.exit(2);
}
const started = Date.now();
const step = (text) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${text}`);

// The operations and schemas of openapi.yaml, read from its layout (paths at
// two spaces, methods at four; schemas at four under components.schemas).
function specOutline(text) {
  const operations = [];
  const schemas = [];
  let top = null;
  let sub = null;
  let path = null;
  for (const line of text.split('\n')) {
    let m;
    if ((m = line.match(/^([^\s#][^:]*):/))) {
      [top, sub] = [m[1], null];
    } else if (top === 'paths' && (m = line.match(/^ {2}(\/\S*):\s*$/))) {
      path = m[1];
    } else if (top === 'paths' && (m = line.match(/^ {4}(get|put|post|delete|patch|head|options|trace):/))) {
      operations.push(`${m[1].toUpperCase()} ${path}`);
    } else if (top === 'components' && (m = line.match(/^ {2}([^\s#][^:]*):/))) {
      sub = m[1];
    } else if (top === 'components' && sub === 'schemas' && (m = line.match(/^ {4}([^\s#][^:]*):/))) {
      schemas.push(m[1]);
    }
  }
  return { operations, schemas };
}

function fail(message) {
  throw new Error(message);
}

const spec = specOutline(readFileSync(join(root, 'openapi.yaml'), 'utf8'));
if (spec.operations.length === 0 || spec.schemas.length === 0) fail('found no operations or schemas in openapi.yaml');

const profile = mkdtempSync(join(tmpdir(), 'docs-chromium-'));
// A fresh profile (--user-data-dir) for each run, removed at the end.
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 900 },
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
});
let page;
try {
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));

  // 1. The page renders every operation and schema of the spec.
  await page.goto(`${base}/docs`);
  await page.locator('.opblock').first().waitFor();
  const rendered = await page.$$eval('.opblock', (blocks) =>
    blocks.map((b) => {
      const method = b.querySelector('.opblock-summary-method')?.textContent.trim();
      const path = b.querySelector('.opblock-summary-path')?.getAttribute('data-path');
      return `${method} ${path}`;
    }),
  );
  const missing = spec.operations.filter((op) => !rendered.includes(op));
  if (missing.length) fail(`operations of openapi.yaml not on the page: ${missing.join(', ')}`);
  const servers = await page.$$eval('.servers select option', (os) => os.map((o) => o.value));
  if (servers.length !== 1 || servers[0] !== '/') fail(`"Try it out" would call ${servers.join(', ')}, not this origin`);
  // OpenAPI 3.1: each schema is a top-level JSON Schema 2020-12 block.
  const models = page.locator('section.models article[data-json-schema-level="0"]');
  await models.first().waitFor();
  const schemaNames = await models.locator('> .json-schema-2020-12-head .json-schema-2020-12__title').allTextContents();
  const schemaCount = schemaNames.length;
  const missingSchemas = spec.schemas.filter((s) => !schemaNames.map((n) => n.trim()).includes(s));
  if (missingSchemas.length) fail(`schemas of openapi.yaml not on the page: ${missingSchemas.join(', ')}`);
  step(
    `opened ${base}/docs: ${rendered.length} operations (all ${spec.operations.length} of openapi.yaml) and ` +
      `${schemaCount} schemas rendered; "Try it out" server: the page's own origin`,
  );

  // 2. Authorize with the dev token.
  await page.locator('.auth-wrapper button.authorize').click();
  const dialog = page.locator('.modal-ux');
  await dialog.locator('input').first().fill(token);
  await dialog.locator('.auth-btn-wrapper button.authorize').click();
  await dialog.locator('.auth-btn-wrapper button.btn-done, .auth-btn-wrapper button.close-modal').first().click();
  await dialog.waitFor({ state: 'detached' });
  if (!(await page.locator('.auth-wrapper button.authorize.locked').count())) fail('Authorize did not take the token');
  step('authorized with the dev token (bearer jwt)');

  // 3 and 4. "Try it out" on an operation; returns the status and body shown.
  const operation = (method, path) =>
    page.locator(`.opblock-${method}:has(.opblock-summary-path[data-path="${path}"])`).first();
  async function tryIt(op, fill) {
    await op.locator('.opblock-summary-control').click();
    await op.locator('button.try-out__btn').click();
    if (fill) await fill(op);
    await op.locator('button.execute').click();
    const live = op.locator('.live-responses-table .response');
    await live.first().waitFor();
    const status = (await live.first().locator('.response-col_status').textContent()).trim();
    const body = (await live.first().locator('.response-col_description pre').first().textContent()).trim();
    const url = (await op.locator('.request-url pre').textContent().catch(() => '')).trim();
    return { status, body, url };
  }

  const me = await tryIt(operation('get', '/users/me'));
  let meBody;
  try {
    meBody = JSON.parse(me.body);
  } catch {
    fail(`GET /users/me showed a body that is not JSON: ${me.body.slice(0, 200)}`);
  }
  if (me.status !== '200' || meBody.userId !== 'bob') fail(`GET /users/me showed ${me.status}: ${me.body.slice(0, 300)}`);
  step(`GET /users/me (${me.url}): shown 200 with "userId": "bob"`);

  const key = `docs-browser-${Date.now()}`;
  const orderBody = { items: [{ productId: '01JF8Z5Q000000000000000004', qty: 1 }] };
  const order = await tryIt(operation('post', '/orders'), async (op) => {
    await op.locator('tr[data-param-name="Idempotency-Key"] input').fill(key);
    await op.locator('textarea.body-param__text').fill(JSON.stringify(orderBody, null, 2));
  });
  let orderShown;
  try {
    orderShown = JSON.parse(order.body);
  } catch {
    fail(`POST /orders showed a body that is not JSON: ${order.body.slice(0, 200)}`);
  }
  if (order.status !== '201' || !orderShown.orderId) fail(`POST /orders showed ${order.status}: ${order.body.slice(0, 300)}`);
  step(`POST /orders (${order.url}, Idempotency-Key ${key}): shown 201 with orderId ${orderShown.orderId}`);

  if (pageErrors.length) fail(`errors on the page: ${pageErrors.join('; ')}`);
  mkdirSync(dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });
  step(`screenshot: ${screenshot}`);
} catch (e) {
  if (page) {
    mkdirSync(dirname(screenshot), { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true }).catch(() => {});
    console.error(`screenshot of the failure: ${screenshot}`);
  }
  console.error(`docs in the browser: FAILED: ${e.message}`);
  process.exitCode = 1;
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
