import assert from 'node:assert/strict';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../support/browser';
import { api, startSystem, type TestSystem } from '../support/system';
import { waitForJob } from './workflows-support';

const PASSWORD = 'demo-password-123';
const call = { context: { requestId: 'test', tenant: 'demo' } };

describe('browser: the forecast explorer page', function () {
  this.timeout(120_000);
  const shots = mkdtempSync(join(tmpdir(), 'explorer-browser-'));
  let sys: TestSystem;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let token: string;
  let itemLocationId: number;
  let retail: { customer_group_id: number; model: string; periods: number; history: number };
  const foreign: string[] = [];
  const problems: string[] = [];

  before(async function () {
    const missing = chromiumMissing();
    if (missing) {
      console.log(`    skipped: ${missing}`);
      this.skip();
    }
    sys = await startSystem();
    await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000 }, call);
    token = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
    const started = await api(sys, '/demo/api/v1/forecasts/generate', {
      method: 'POST',
      token,
      body: { item_name: 'SKU-0020', forecast_periods: 12 },
    });
    assert.equal(started.status, 202, started.text);
    assert.equal((await waitForJob(sys, 'demo', token, started.body.data[0].job_id, 90_000)).status, 'succeeded');
    const planned = await api(sys, '/demo/api/v1/supply-plans/generate', {
      method: 'POST',
      token,
      body: { mode: 'standard', item_name: 'SKU-0020', location_name: 'DC-East' },
    });
    assert.equal(planned.status, 200, planned.text);
    itemLocationId = planned.body.data[0].item_location_id;
    const runs = await api(sys, '/demo/api/v1/forecasts/runs?per_page=1', { token });
    const detail = await api(sys, `/demo/api/v1/forecasts/runs/${runs.body.data[0].id}?filter[customer_group_name]=Retail`, { token });
    const series = detail.body.data[0].series[0];
    const history = await api(
      sys,
      '/demo/api/v1/sales-data?filter[sale_type_name]=History&filter[item_name]=SKU-0020&filter[customer_group_name]=Retail&per_page=5000',
      { token },
    );
    retail = {
      customer_group_id: series.customer_group_id,
      model: series.model,
      periods: series.periods.length,
      history: history.body.data.length,
    };
    assert.equal(retail.periods, 12);
    assert.ok(retail.history > 0);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await sys?.stop();
    console.log(`    screenshots: ${shots}`);
  });
  beforeEach(async () => {
    foreign.length = 0;
    problems.length = 0;
    context = await browser.newContext({ baseURL: sys.baseUrl, viewport: { width: 1100, height: 1200 } });
    page = await context.newPage();
    page.on('pageerror', (err) => problems.push(`script error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400 && r.request().resourceType() !== 'document') problems.push(`${r.status()} ${r.url()}`);
    });
    page.on('request', (req) => {
      if (!req.url().startsWith(sys.baseUrl) && !req.url().startsWith('data:')) foreign.push(req.url());
    });
  });
  afterEach(() => context?.close());

  async function logIn(email: string, then: string) {
    await page.goto(then);
    assert.match(page.url(), /\/demo\/login$/, 'signed-out visitors are sent to the login page');
    await page.fill('input[name=email]', email);
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL('**/demo/settings/api-access');
  }

  it('charts a demo item-location: history and forecast with intervals, the model and accuracy, and the supply plan below; a screenshot is saved', async () => {
    const path = `/demo/forecasts/explorer?item_location_id=${itemLocationId}&customer_group_id=${retail.customer_group_id}`;
    await logIn('planner@demo.test', path);
    // The login and API Access pages ask for a favicon; only the explorer's own requests count.
    problems.length = 0;
    const res = await page.goto(path);
    assert.equal(res!.status(), 200);
    await page.waitForSelector('body[data-charts-ready="true"]');

    const chart = await page.evaluate(() => {
      const u = (globalThis as any).forecastChart;
      // Counted inline: a helper function would be renamed by the test's transpiler, and the page does not know its helper.
      const [x, history, forecast, lo95, , , hi80] = u.data.map(
        (values: Array<number | null>) => values.filter((v) => v !== null && v !== undefined).length,
      );
      return { x, history, forecast, lo95, hi80, canvases: (globalThis as any).document.querySelectorAll('#forecast-chart canvas').length };
    });
    assert.deepEqual(chart, {
      x: retail.history + retail.periods,
      history: retail.history,
      forecast: retail.periods,
      lo95: retail.periods,
      hi80: retail.periods,
      canvases: 1,
    });
    assert.equal(await page.getAttribute('#forecast-chart', 'data-forecast-points'), String(retail.periods));
    assert.equal(await page.locator('#model').innerText(), retail.model);
    assert.match(await page.locator('#accuracy').innerText(), /^MASE [\d.]+ · RMSSE [\d.]+ · bias -?[\d.]+$/);
    assert.equal(await page.locator('#item-location').inputValue(), String(itemLocationId));

    const plan = await page.evaluate(() => {
      const u = (globalThis as any).planChart;
      return { x: u.data[0].length, series: u.series.map((s: any) => s.label).slice(1) };
    });
    assert.deepEqual(plan, { x: 52, series: ['Projected on-hand', 'Planned receipts', 'Gross requirements', 'Safety stock'] });
    assert.match(await page.locator('#safety-stock').innerText(), /^fixed \d/);

    const shot = join(shots, 'forecast-explorer.png');
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(statSync(shot).size > 10_000, 'a screenshot with the charts');
    assert.deepEqual(foreign, [], 'everything comes from the gateway (no CDN)');
    assert.deepEqual(problems, [], 'no script error or CSP violation');

    // Picking another series reloads the page with its chart.
    const other = await page.locator('#customer-group option').evaluateAll((options) => options.map((o) => (o as any).value as string));
    assert.ok(other.length >= 3, 'DC-East plans Retail, Online and Wholesale');
    await Promise.all([
      page.waitForURL(/customer_group_id=/),
      page.selectOption(
        '#customer-group',
        other.find((v) => v !== String(retail.customer_group_id))!,
      ),
    ]);
    await page.waitForSelector('body[data-charts-ready="true"]');
    assert.equal(await page.evaluate(() => (globalThis as any).forecastChart.data[0].length > 12), true);
  });

  it('needs a signed-in user with access to the demand module', async () => {
    await logIn('nodemand@demo.test', '/demo/forecasts/explorer');
    const res = await page.goto('/demo/forecasts/explorer');
    assert.equal(res!.status(), 403);
    assert.match(await page.content(), /no access to the Demand module/);
    const anonymous = await fetch(`${sys.baseUrl}/demo/forecasts/explorer`, { redirect: 'manual' });
    assert.equal(anonymous.status, 302);
    assert.equal(anonymous.headers.get('location'), '/demo/login');
  });
});
