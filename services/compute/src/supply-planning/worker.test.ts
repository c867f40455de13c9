import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError, createLogger, openStore, type Bus, type Clients, type Store } from '@supply/kit';
import type { ExternalJobEvent, supply_reference_v1 as ref, supply_transactional_v1 as tx } from '@supply/contracts';
import { bucketsFromCalendar } from '../engines/mrp';
import { openModelRuns } from '../runs/repository';
import { openPlanRepositories, type PlanRepositories } from './repository';
import { REPLAY_HEADER } from '@supply/kit';
import { PlanChunkWorker } from './worker';

const PERIODS = bucketsFromCalendar({ start: '2025-01-06', bucket: 'week', count: 8 });

function itemLocation(id: number, overrides: Partial<ref.ItemLocation> = {}): ref.ItemLocation {
  return {
    id,
    item_id: id,
    item_name: `SKU-${id}`,
    location_id: 1,
    location_name: 'DC-East',
    lead_time: 0,
    safety_stock: 0,
    min_order_qty: 0,
    order_multiple: 0,
    max_order_qty: 0,
    lot_sizing_rule: 'lot_for_lot',
    fixed_order_qty: 0,
    ordering_cost: 0,
    holding_rate: 0.25,
    unit_cost: 2,
    periods_of_supply: 0,
    service_level: 0,
    partner: false,
    created_at: '',
    updated_at: '',
    ...overrides,
  };
}

/** Reference, transactional and workflows as the worker sees them, with every write recorded. */
function fakeSystem(itemLocations: ref.ItemLocation[], sent: Array<{ queue: string; body: ExternalJobEvent; messageId?: string }>) {
  const writes: string[] = [];
  let failWrites = false;
  const page = <R>(records: R[]) => ({ records, page: { page: 1, per_page: 100, total: records.length } });
  const clients = {
    reference: {
      getPlanningParameters: async ({ ids }: ref.GetPlanningParametersRequest) => ({
        records: itemLocations.filter((il) => ids.includes(il.id)).map((il) => ({ item_location: il, unit_price: 5, uom: 'Each' })),
        unknown_ids: [],
        unknown_names: [],
      }),
      listCustomerGroups: async () => page([{ id: 1, name: 'Retail' }]),
      listLocations: async () => page([{ id: 1, name: 'DC-East' }]),
      listItemLocations: async ({ filter_item_name }: ref.ListRequest) =>
        page(itemLocations.filter((il) => il.item_name === filter_item_name)),
    },
    transactional: {
      // 10 a week last year for every item: the standard fallback.
      querySales: async ({ filter }: tx.QuerySalesRequest) => ({
        records: filter!.item_names.flatMap((name) =>
          PERIODS.map((_, t) => ({
            item_id: itemLocations.find((il) => il.item_name === name)?.item_id ?? 0,
            customer_group_id: 1,
            sale_type_name: 'History',
            sell_date: bucketsFromCalendar({ start: '2024-01-08', bucket: 'week', count: 8 })[t]!,
            quantity: 10,
          })),
        ),
        page: { has_more: false, first_position: '', last_position: '' },
      }),
      queryInventory: async () => ({ records: [], page: { has_more: false, first_position: '', last_position: '' } }),
      replaceSupplyPlan: async ({ target }: tx.ReplaceSupplyPlanRequest) => {
        if (failWrites) throw new AppError('unavailable', 'transactional is down');
        writes.push(`supply:${target!.item_location_id}`);
        return { written: PERIODS.length, deleted: 0 };
      },
      replaceFinancialPlan: async ({ target }: tx.ReplaceFinancialPlanRequest) => {
        if (failWrites) throw new AppError('unavailable', 'transactional is down');
        writes.push(`financial:${target!.item_location_id}`);
        return { written: PERIODS.length, deleted: 0 };
      },
    },
    workflows: {
      // The job as workflows folds it: each part counted once.
      getJob: async () => {
        const parts = new Map(sent.filter((s) => s.body.type === 'part').map((s) => [(s.body as { part: string }).part, s.body]));
        const processed = [...parts.values()].reduce((n, e) => n + ((e as { processed?: number }).processed ?? 0), 0);
        return { progress: { processed, total: 3 }, finished_at: '' };
      },
    },
  } as unknown as Clients;
  return { clients, writes, failWrites: (on: boolean) => (failWrites = on) };
}

describe('supply planning: plan-run chunk worker', () => {
  let dir: string;
  let store: Store;
  let repos: PlanRepositories;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'supply-plan-worker-'));
    store = await openStore({ database: 'compute', dataDir: dir });
    repos = await openPlanRepositories(store);
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function setUp(chunks: number[][]) {
    const sent: Array<{ queue: string; body: ExternalJobEvent; messageId?: string }> = [];
    const bus = {
      send: async (queue: string, body: ExternalJobEvent, options?: { messageId?: string }) =>
        void sent.push({ queue, body, messageId: options?.messageId }),
    } as unknown as Bus;
    const runs = await openModelRuns(store);
    const fake = fakeSystem([itemLocation(1), itemLocation(2, { lot_sizing_rule: 'fixed_order_quantity' })], sent);
    const run = await runs.insertOne({
      tenant: 'demo',
      kind: 'supply_plan',
      job_id: 70,
      status: 'queued',
      created_at: '',
      finished_at: null,
    });
    await repos.jobs.insertOne({
      _id: run._id,
      tenant: 'demo',
      job_id: 70,
      principal: { tenant: 'demo', tokenId: 1, userId: 1, scopes: ['*'], isAdmin: false },
      mode: 'standard',
      supply_policy: 'unconstrained',
      view_id: 1,
      view_name: 'Default',
      bucket: 'week',
      period_starts: PERIODS,
      chunks,
      total: chunks.flat().length,
      dispatched: true,
      open: true,
      created_ms: Date.now(),
    });
    const worker = new PlanChunkWorker({ clients: fake.clients, runs, repos, bus, logger: createLogger('silent') });
    return { worker, sent, fake, runs, runId: run._id };
  }

  it('plans a chunk once, reports the same part on redelivery, and finishes the job after the last chunk', async () => {
    const { worker, sent, fake, runs, runId } = await setUp([[1, 2], [3]]);
    await worker.handle({ tenant: 'demo', run_id: runId, seq: 0 }, { messageId: 'm0', deliveryCount: 1 });
    assert.deepEqual(fake.writes.sort(), ['financial:1', 'supply:1'], 'item-location 2 fails before anything is stored');
    assert.deepEqual(
      sent.map((s) => s.body.type),
      ['started', 'part'],
    );
    const part = sent[1]!;
    assert.equal(part.queue, 'workflows.job-events');
    assert.equal(part.messageId, `part:${runId}:chunk-0:0`);
    assert.deepEqual(part.body, {
      job_id: 70,
      tenant: 'demo',
      type: 'part',
      part: 'chunk-0',
      processed: 2,
      result: { created: 1, failed: 1 },
      errors: [
        {
          row: 1,
          field: 'parameters.fixed_order_qty',
          message: 'SKU-2 at DC-East: The parameters.fixed_order_qty must be a finite number.',
        },
      ],
      errors_count: 1,
    });

    await worker.handle({ tenant: 'demo', run_id: runId, seq: 0 }, { messageId: 'm0', deliveryCount: 2 });
    assert.equal(fake.writes.length, 2, 'a redelivered chunk is not planned again');
    assert.deepEqual(sent.slice(2), [part], 'and reports exactly the same part');

    await worker.handle({ tenant: 'demo', run_id: runId, seq: 1 }, { messageId: 'm1', deliveryCount: 1 });
    const [started, part1, finished] = sent.slice(3);
    assert.equal(started!.body.type, 'started');
    assert.deepEqual(part1!.body.type === 'part' && part1!.body.errors, [
      { row: 2, field: 'item_location_id', message: 'Item-location 3 no longer exists.' },
    ]);
    assert.deepEqual(finished!.body, {
      job_id: 70,
      tenant: 'demo',
      type: 'finished',
      status: 'partially_succeeded',
      message: `Planned 1 of 3 item-locations of view Default (standard mode, unconstrained supply, plan run ${runId}); 2 could not be planned, see errors.`,
      // The job ends once both chunks' parts are counted, so the worker does not poll it.
      parts: 2,
    });
    assert.equal((await runs.findById(runId))!.status, 'partially_succeeded');
    assert.equal((await repos.jobs.findById(runId))!.open, false);
  });

  it('retries a chunk while the bus would retry it: nothing recorded, nothing reported but its start', async () => {
    const { worker, sent, fake, runId } = await setUp([[1]]);
    fake.failWrites(true);
    const retried = Object.defineProperty({ messageId: 'm', deliveryCount: 1 }, 'willDeadLetter', { value: () => false });
    await assert.rejects(worker.handle({ tenant: 'demo', run_id: runId, seq: 0 }, retried), /transactional is down/);
    assert.deepEqual(
      sent.map((s) => s.body.type),
      ['started'],
      'nothing reported',
    );
    assert.equal(await repos.chunks.count({ job: String(runId) }), 0, 'nothing recorded, so the retry plans again');
  });

  it('a chunk the bus gives up on is recorded failed, reported, finishes the job, and still goes to the dead-letter queue; a replay plans it again', async () => {
    const { worker, sent, fake, runs, runId } = await setUp([[1]]);
    fake.failWrites(true);
    const lastChance = Object.defineProperty({ messageId: 'm', deliveryCount: 1 }, 'willDeadLetter', { value: () => true });
    await assert.rejects(
      worker.handle({ tenant: 'demo', run_id: runId, seq: 0 }, lastChance),
      /transactional is down/,
      'thrown, so the bus dead-letters it',
    );
    assert.deepEqual(
      sent.map((s) => s.body.type),
      ['started', 'part', 'finished'],
    );
    const failed = sent[1]!.body;
    assert.deepEqual(failed.type === 'part' && [failed.result, failed.errors?.[0]?.message], [
      { created: 0, failed: 1 },
      'Could not be planned: a service it depends on stayed unavailable for the whole outage window',
    ]);
    assert.equal(sent[2]!.body.type === 'finished' && sent[2]!.body.status, 'failed');
    assert.equal((await repos.chunks.findById(`${runId}:chunk-0`))!.state, 'failed');

    // A redelivery of the same generation reports the recorded failure again, without planning.
    sent.length = 0;
    await worker.handle({ tenant: 'demo', run_id: runId, seq: 0 }, { messageId: 'm', deliveryCount: 1 });
    assert.deepEqual(
      sent.map((s) => s.body.type),
      ['part', 'finished'],
    );

    // The operator replays the dead letter once transactional is back: planned, and the report replaces the failure.
    fake.failWrites(false);
    sent.length = 0;
    await worker.handle(
      { tenant: 'demo', run_id: runId, seq: 0 },
      { messageId: 'm', deliveryCount: 1 },
      { headers: { [REPLAY_HEADER]: '1' } },
    );
    const replayed = sent.find((s) => s.body.type === 'part')!.body;
    assert.ok(replayed.type === 'part');
    assert.deepEqual(
      [replayed.revision, replayed.result, replayed.replaces?.result],
      [1, { created: 1, failed: 0 }, { created: 0, failed: 1 }],
    );
    const last = sent.at(-1)!.body;
    assert.equal(last.type === 'finished' && last.status, 'succeeded');
    assert.equal((await runs.findById(runId))!.status, 'succeeded', 'the run follows its replayed chunk');
  });
});
