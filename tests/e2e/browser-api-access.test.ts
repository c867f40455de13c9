import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../support/browser';
import { api, startSystem, type TestSystem } from '../support/system';

const PASSWORD = 'demo-password-123';

describe('browser: the API Access page', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

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
  });
  beforeEach(async () => {
    context = await browser.newContext({ baseURL: sys.baseUrl });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: sys.baseUrl });
    page = await context.newPage();
    page.on('pageerror', (err) => assert.fail(`script error on the page: ${err.message}`));
  });
  afterEach(() => context?.close());

  async function logIn(email: string) {
    await page.goto('/demo/settings/api-access');
    assert.match(page.url(), /\/demo\/login$/, 'signed-out visitors are sent to the login page');
    await page.fill('input[name=email]', email);
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL('**/demo/settings/api-access');
  }

  it('planner: creates an All Permissions token, uses it, revokes it, and it stops working', async () => {
    await logIn('planner@demo.test');
    const cookie = (await context.cookies()).find((c) => c.name === 'spl_session');
    assert.ok(cookie, 'session cookie set');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');

    await page.fill('#create-token input[name=name]', 'Browser test token');
    await page.selectOption('#create-token select[name=expiry]', '30');
    await page.check('#create-token input[name=scopes][value="*"]');
    await page.click('#create-token button[type=submit]');

    const shown = page.locator('#new-token');
    await shown.waitFor();
    const token = await shown.inputValue();
    assert.match(token, /^\d+\|spl_[A-Za-z0-9]{40}[0-9a-f]{8}$/);
    await page.click('#copy-token');
    await page.locator('#copy-status', { hasText: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText()), token);

    const row = page.locator(`#tokens tr[data-token-id="${token.split('|')[0]}"]`);
    assert.match(await row.innerText(), /Browser test token\s+All Permissions/);
    assert.match(await row.locator('.status').innerText(), /Active/);

    // Shown once: the list page never carries it again.
    await page.goto('/demo/settings/api-access');
    assert.ok(!(await page.content()).includes(token.split('|')[1]!));

    const uoms = await api(sys, '/demo/api/v1/uoms', { token });
    assert.equal(uoms.status, 200);
    assert.ok(uoms.body.data.length > 0);

    const dialogs: string[] = [];
    page.once('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    await page.locator(`#tokens tr[data-token-id="${token.split('|')[0]}"] button`, { hasText: 'Revoke' }).click();
    await page.waitForURL(/revoked=/);
    assert.equal(dialogs.length, 1);
    assert.match(dialogs[0]!, /Revoke “Browser test token”/);
    assert.match(await page.locator(`#tokens tr[data-token-id="${token.split('|')[0]}"] .status`).innerText(), /Revoked/);

    const after = await api(sys, '/demo/api/v1/uoms', { token });
    assert.equal(after.status, 401);
    assert.deepEqual(after.body, { message: 'Unauthenticated.' });
  });

  it('dismissing the confirmation keeps the token', async () => {
    await logIn('planner@demo.test');
    await page.fill('#create-token input[name=name]', 'Keep me');
    await page.check('#create-token input[name=scopes][value="public_api.read"]');
    await page.click('#create-token button[type=submit]');
    const token = await page.locator('#new-token').inputValue();
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.locator(`#tokens tr[data-token-id="${token.split('|')[0]}"] button`, { hasText: 'Revoke' }).click();
    await page.waitForTimeout(200);
    assert.equal((await api(sys, '/demo/api/v1/uoms', { token })).status, 200);
  });

  it('viewer: cannot grant Write (checkbox disabled, a forged POST refused 403)', async () => {
    await logIn('viewer@demo.test');
    assert.equal(await page.isDisabled('#create-token input[name=scopes][value="public_api.write"]'), true);
    assert.equal(await page.isDisabled('#create-token input[name=scopes][value="*"]'), true);
    assert.equal(await page.isDisabled('#create-token input[name=scopes][value="public_api.read"]'), false);

    const csrf = await page.locator('#create-token input[name=_token]').inputValue();
    const before = await page.locator('#tokens tr[data-token-id]').count();
    const forged = await page.request.post('/demo/settings/api-access/tokens', {
      form: { _token: csrf, name: 'forged', expiry: 'none', scopes: 'public_api.write' },
      maxRedirects: 0,
    });
    assert.equal(forged.status(), 403);
    await page.goto('/demo/settings/api-access');
    assert.equal(await page.locator('#tokens tr[data-token-id]').count(), before, 'nothing was created');

    // Removing `disabled` in the page changes nothing either.
    await page.locator('#create-token input[value="public_api.write"]').evaluate((box: any) => {
      box.disabled = false;
      box.checked = true;
    });
    await page.fill('#create-token input[name=name]', 'tampered');
    await page.click('#create-token button[type=submit]');
    assert.match(await page.locator('#create-token .error').innerText(), /Only Planner/);
    assert.equal(await page.locator('#new-token').count(), 0);

    await page.fill('#create-token input[name=name]', 'read only');
    await page.uncheck('#create-token input[name=scopes][value="public_api.write"]');
    await page.check('#create-token input[name=scopes][value="public_api.read"]');
    await page.click('#create-token button[type=submit]');
    assert.match(await page.locator('#new-token').inputValue(), /^\d+\|spl_/);
  });

  it('requires a name and at least one permission, and refuses a form without its CSRF token', async () => {
    await logIn('planner@demo.test');
    await page.fill('#create-token input[name=name]', 'nothing ticked');
    await page.click('#create-token button[type=submit]');
    assert.match(await page.locator('#create-token').innerText(), /at least one permission/);

    const noCsrf = await page.request.post('/demo/settings/api-access/tokens', {
      form: { name: 'csrf-less', expiry: 'none', scopes: 'public_api.read' },
      maxRedirects: 0,
    });
    assert.equal(noCsrf.status(), 419);
  });

  it('logs out, and the session no longer opens the page', async () => {
    await logIn('planner@demo.test');
    await page.click('header button[type=submit]');
    await page.waitForURL('**/demo/login');
    await page.goto('/demo/settings/api-access');
    assert.match(page.url(), /\/demo\/login$/);
  });

  it('answers 404 for a workspace whose Public API module is disabled', async () => {
    for (const path of ['/closed/login', '/closed/settings/api-access', '/no-such-tenant/login']) {
      const res = await page.goto(path);
      assert.equal(res?.status(), 404, path);
    }
  });
});
