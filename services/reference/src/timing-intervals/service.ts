import type { supply_reference_v1 as pb } from '@supply/contracts';
import { findOwned, nameFilter, offsetPage } from '../common/reads';
import type { ReferenceDb } from '../db';
import type { TimingIntervalRecord } from './repository';

function toTimingInterval(r: TimingIntervalRecord): pb.TimingInterval {
  return { id: r._id, name: r.name, created_at: r.created_at, updated_at: r.updated_at };
}

export async function listTimingIntervals(db: ReferenceDb, tenant: string, req: pb.ListRequest): Promise<pb.TimingIntervals> {
  return offsetPage(db.timingIntervals, nameFilter(tenant, req.filter_name), req.page, (rs) => rs.map(toTimingInterval));
}

export async function getTimingInterval(db: ReferenceDb, tenant: string, id: number): Promise<pb.TimingInterval> {
  return toTimingInterval(await findOwned(db.timingIntervals, tenant, id, 'timing interval'));
}
