import assert from 'node:assert/strict';
import { createLogger, isAppError, type CallContext, type Clients } from '@supply/kit';
import type { supply_compute_v1 as pb } from '@supply/contracts';
import { LIMITS, SupplyPlanService, type ServiceDeps } from './service';

const request = (item_location_id: number): pb.GenerateSupplyPlanRequest => ({
  mode: 'standard',
  item_location_id,
  item_name: '',
  location_name: '',
  view_id: 0,
  view_name: '',
  supply_policy: '',
  idempotency_key: '',
});

describe('supply planning: synchronous capacity', () => {
  it('answers 503 with Retry-After once the synchronous plans in flight reach the bound', async () => {
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    // The first plan waits inside its first reference read; it then finds no such item-location.
    const clients = {
      reference: {
        getPlanningParameters: async () => {
          await blocked;
          return { records: [], unknown_ids: [], unknown_names: [] };
        },
      },
    } as unknown as Clients;
    const service = new SupplyPlanService({
      clients,
      logger: createLogger('silent'),
      limits: { ...LIMITS, syncPlansInFlight: 1 },
    } as unknown as ServiceDeps);
    const ctx = { requireTenant: () => 'demo' } as unknown as CallContext;

    const first = service.generate(request(1), ctx);
    await assert.rejects(service.generate(request(2), ctx), (err: unknown) => {
      assert.ok(isAppError(err));
      assert.equal(err.code, 'unavailable');
      assert.deepEqual(err.details, { problem: 'service-unavailable', headers: { 'Retry-After': '1' } });
      return true;
    });
    release();
    await assert.rejects(first, /invalid/);
    await assert.rejects(service.generate(request(3), ctx), /item location id is invalid/, 'the slot is free again');
  });
});
