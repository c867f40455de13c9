import assert from 'node:assert/strict';
import { api, startSystem, type TestSystem } from '../support/system';
import { waitForJob } from './workflows-support';

const GENERATE = '/demo/api/v1/supply-plans/generate';
const call = { context: { requestId: 'test', tenant: 'demo' } };
const Z = { 0.95: 1.6448536, 0.99: 2.3263479 };

describe('supply plans: safety stock from a service level and the forecast intervals', function () {
  this.timeout(120_000);
  let sys: TestSystem;
  let token: string;
  let il: any;

  const plan = async () => {
    const res = await api(sys, GENERATE, {
      method: 'POST',
      token,
      body: { mode: 'standard', item_name: 'SKU-0020', location_name: 'DC-East' },
    });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const patch = (body: Record<string, unknown>) => api(sys, `/demo/api/v1/item-locations/${il.id}`, { method: 'PATCH', token, body });

  before(async () => {
    sys = await startSystem();
    await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000 }, call);
    token = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
    const res = await api(sys, '/demo/api/v1/item-locations?filter[item_name]=SKU-0020&filter[location_name]=DC-East', { token });
    il = res.body.data[0];
    assert.equal(il.service_level, 0, 'no service level by default');
    assert.equal(
      (
        await patch({
          lead_time: 2,
          safety_stock: 20,
          lot_sizing_rule: 'lot_for_lot',
          min_order_qty: 0,
          order_multiple: 0,
          max_order_qty: 0,
        })
      ).status,
      200,
    );
  });
  after(() => sys?.stop());

  it('plans the fixed safety stock without a service level, and says so', async () => {
    const { meta } = await plan();
    assert.deepEqual(meta.safety_stock, { source: 'fixed', quantity: 20, service_level: null });
    assert.equal(meta.lot_policy.safety_stock, 20);
  });

  it('keeps the fixed quantity, with a note, while no forecast interval exists for the item', async () => {
    const patched = await patch({ service_level: 0.95 });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.data[0].service_level, 0.95);
    const { meta } = await plan();
    assert.equal(meta.safety_stock.source, 'fixed');
    assert.equal(meta.safety_stock.quantity, 20);
    assert.equal(meta.safety_stock.service_level, 0.95);
    assert.match(meta.safety_stock.note, /No forecast with prediction intervals/);
  });

  it('sizes safety stock as z x sigma over the lead time once the item is forecast; a higher service level keeps more', async () => {
    const started = await api(sys, '/demo/api/v1/forecasts/generate', { method: 'POST', token, body: { item_name: 'SKU-0020' } });
    assert.equal(started.status, 202, started.text);
    const job = await waitForJob(sys, 'demo', token, started.body.data[0].job_id, 90_000);
    assert.equal(job.status, 'succeeded', job.message);
    const runs = await api(sys, '/demo/api/v1/forecasts/runs?per_page=1', { token });
    const runId = runs.body.data[0].id;

    const at95 = (await plan()).meta;
    const s95 = at95.safety_stock;
    assert.equal(s95.source, 'service_level');
    assert.equal(s95.service_level, 0.95);
    assert.ok(Math.abs(s95.z - Z[0.95]) < 1e-4);
    assert.equal(s95.series, 3, 'DC-East plans a share of Retail, Online and Wholesale');
    assert.deepEqual(s95.forecast_run_ids, [runId]);
    assert.ok(s95.sigma_lead_time > 0);
    // z and sigma are shown to 4 decimals, the quantity from the exact values.
    assert.ok(Math.abs(s95.quantity - s95.z * s95.sigma_lead_time) < 1e-4 * (s95.z + s95.sigma_lead_time) + 1e-4);
    assert.notEqual(s95.quantity, 20);
    assert.equal(at95.lot_policy.safety_stock, s95.quantity, 'the engine planned with it');

    // The sigma follows from the intervals the run recorded: two-week lead time, half of each group's demand.
    const detail = await api(sys, `/demo/api/v1/forecasts/runs/${runId}`, { token });
    let variance = 0;
    for (const s of detail.body.data[0].series) {
      if (!['Retail', 'Online', 'Wholesale'].includes(s.customer_group_name)) continue;
      for (const p of s.periods.slice(0, 2)) variance += (((p.hi80 - p.forecast) / 1.2816 + (p.hi95 - p.forecast) / 1.96) / 2) ** 2;
    }
    assert.ok(
      Math.abs(s95.sigma_lead_time - 0.5 * Math.sqrt(variance)) < 1e-4 * s95.sigma_lead_time + 1e-3,
      `${s95.sigma_lead_time} vs ${0.5 * Math.sqrt(variance)}`,
    );

    assert.equal((await patch({ service_level: 0.99 })).status, 200);
    const s99 = (await plan()).meta.safety_stock;
    assert.equal(s99.source, 'service_level');
    assert.ok(s99.quantity > s95.quantity);
    assert.ok(Math.abs(s99.quantity / s95.quantity - Z[0.99] / Z[0.95]) < 1e-3);

    assert.equal((await patch({ service_level: 0 })).status, 200);
    assert.deepEqual((await plan()).meta.safety_stock, { source: 'fixed', quantity: 20, service_level: null });
  });

  it('refuses a service level of 1 or more, or below 0 (422 on service_level)', async () => {
    for (const value of [1, 1.5, -0.1, 'high']) {
      const res = await patch({ service_level: value });
      assert.equal(res.status, 422, `${value}: ${res.text}`);
      assert.ok(res.body.errors.service_level, res.text);
    }
  });
});
