import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { PROBLEMS } from '@supply/gateway';
import { chromiumMissing, launchChromium } from '../support/browser';
import { startSystem, type TestSystem } from '../support/system';

describe('browser: the API reference at /docs', function () {
  this.timeout(90_000);
  let sys: TestSystem;
  let browser: Browser;
  let page: Page;
  const shots = mkdtempSync(join(tmpdir(), 'docs-browser-'));
  const foreign: string[] = [];
  const errors: string[] = [];

  before(async function () {
    const missing = chromiumMissing();
    if (missing) {
      console.log(`    skipped: ${missing}`);
      this.skip();
    }
    sys = await startSystem();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await sys?.stop();
    console.log(`    screenshots: ${shots}`);
  });
  beforeEach(async () => {
    page = await browser.newPage({ baseURL: sys.baseUrl });
    foreign.length = 0;
    errors.length = 0;
    page.on('request', (r) => {
      if (!r.url().startsWith(sys.baseUrl) && !r.url().startsWith('data:')) foreign.push(r.url());
    });
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
  });
  afterEach(() => page?.close());

  it('renders every tag of /openapi.json from the gateway itself: no CDN, no CSP violation', async () => {
    const doc = (await (await fetch(`${sys.baseUrl}/openapi.json`)).json()) as { tags: Array<{ name: string }> };
    const response = await page.goto('/docs');
    assert.equal(response?.status(), 200);
    assert.match(response!.headers()['content-security-policy'] ?? '', /script-src 'self'/);
    const sidebar = page.locator('.sidebar, nav, aside').first();
    await page.getByText('Supply Planning Service API', { exact: true }).first().waitFor();
    // A visible heading or sidebar entry per tag (hidden copies, e.g. of the search index, do not count).
    for (const { name } of doc.tags) await page.locator(`:text-is("${name}"):visible`).first().waitFor({ timeout: 30_000 });
    assert.ok(await sidebar.isVisible());
    await page.screenshot({ path: join(shots, 'docs.png') });
    assert.deepEqual(foreign, [], 'the page loads nothing from other hosts');
    assert.deepEqual(errors, [], 'no script or CSP errors');
  });

  it('tries an operation with a demo token: the request carries the bearer token and the answer shows', async () => {
    const token = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.read']);
    const sent: Array<{ url: string; authorization?: string }> = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/v1/')) sent.push({ url: r.url(), authorization: r.headers().authorization });
    });
    await page.goto('/docs');
    await page.locator('input[placeholder="Token"]:visible').first().fill(token);
    await page
      .getByRole('button', { name: /Test Request/ })
      .first()
      .click();
    const answered = page.waitForResponse((r) => r.url() === `${sys.baseUrl}/demo/api/v1/uoms` && r.request().method() === 'GET');
    await page.getByRole('button', { name: /^Send/ }).first().click();
    const answer = await answered;
    assert.equal(answer.status(), 200);
    await page.getByText('200 OK').first().waitFor();
    await page.getByText('"abbreviation"').first().waitFor();
    await page.screenshot({ path: join(shots, 'try-it-out.png') });
    assert.deepEqual(
      sent.map((s) => s.authorization),
      [`Bearer ${token}`],
    );
    assert.deepEqual(foreign, []);
  });

  it('serves a human page for every problem type', async () => {
    for (const [slug, { status, title }] of Object.entries(PROBLEMS)) {
      const res = await fetch(`${sys.baseUrl}/problems/${slug}`);
      assert.equal(res.status, 200, slug);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      const html = await res.text();
      assert.ok(html.includes(`<h1>${title.replace(/'/g, '&#39;')}</h1>`), slug);
      assert.ok(html.includes(`<strong>${status}</strong>`), slug);
    }
    const response = await page.goto('/problems/credits-exhausted');
    assert.equal(response?.status(), 200);
    assert.match(await page.locator('body').innerText(), /credits for this month are spent/);
    assert.equal((await fetch(`${sys.baseUrl}/problems/no-such-problem`)).status, 404);
  });
});
