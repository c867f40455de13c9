import type { supply_reference_v1 as pb } from '@supply/contracts';
import { FieldErrorBag, MESSAGES } from '../common/field-errors';
import { findOwned, nameFilter, offsetPage } from '../common/reads';
import { nameKey } from '../common/records';
import { checkUnique } from '../common/unique';
import { insertValidated, updateValidated } from '../common/writes';
import type { ReferenceDb } from '../db';
import { BUCKETS, WEEK_DAYS, type Bucket, type CalendarRecord, type WeekDay } from './repository';

export function toCalendar(r: CalendarRecord): pb.Calendar {
  return {
    id: r._id,
    name: r.name,
    bucket: r.bucket,
    week_start: r.week_start,
    start_date: r.start_date,
    periods: r.periods,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export async function listCalendars(db: ReferenceDb, tenant: string, req: pb.ListRequest): Promise<pb.Calendars> {
  return offsetPage(db.calendars, nameFilter(tenant, req.filter_name), req.page, (rs) => rs.map(toCalendar));
}

export async function getCalendar(db: ReferenceDb, tenant: string, id: number): Promise<pb.Calendar> {
  return toCalendar(await findOwned(db.calendars, tenant, id, 'calendar'));
}

function checkFields(bag: FieldErrorBag, i: number, r: pb.CalendarInput, creating: boolean): void {
  if (creating) {
    for (const field of ['name', 'bucket', 'start_date', 'periods'] as const)
      if (r[field] === undefined || r[field] === '') bag.add(i, field, MESSAGES.required);
  }
  if (r.bucket !== undefined && !(BUCKETS as readonly string[]).includes(r.bucket)) bag.add(i, 'bucket', MESSAGES.exists);
  if (r.week_start !== undefined && !(WEEK_DAYS as readonly string[]).includes(r.week_start)) bag.add(i, 'week_start', MESSAGES.exists);
  if (r.start_date !== undefined && r.start_date !== '' && Number.isNaN(Date.parse(`${r.start_date}T00:00:00Z`))) {
    bag.add(i, 'start_date', 'The :attribute field must be a valid date (YYYY-MM-DD).');
  }
}

export async function createCalendars(db: ReferenceDb, tenant: string, req: pb.CreateCalendarsRequest): Promise<pb.Calendars> {
  const validate = async () => {
    const bag = new FieldErrorBag(req.array_body);
    req.records.forEach((r, i) => checkFields(bag, i, r, true));
    await checkUnique(
      db.calendars,
      tenant,
      'name',
      req.records.map((r, index) => ({ index, value: r.name })),
      bag,
    );
    bag.throwIfAny();
  };
  const created = await insertValidated(db.calendars, tenant, validate, () =>
    req.records.map((r) => ({
      name: r.name!,
      name_lower: nameKey(r.name!),
      bucket: r.bucket as Bucket,
      week_start: (r.week_start ?? 'monday') as WeekDay,
      start_date: r.start_date!,
      periods: r.periods!,
    })),
  );
  return { records: created.map(toCalendar), page: undefined };
}

export async function updateCalendar(db: ReferenceDb, tenant: string, req: pb.UpdateCalendarRequest): Promise<pb.Calendar> {
  const record = await findOwned(db.calendars, tenant, req.id, 'calendar');
  const patch = req.patch ?? {};
  const validate = async () => {
    const bag = new FieldErrorBag(false);
    checkFields(bag, 0, patch, false);
    await checkUnique(db.calendars, tenant, 'name', [{ index: 0, value: patch.name, selfId: record._id }], bag);
    // Views over this calendar keep their meaning: same bucket, enough periods for their horizon.
    const views = patch.bucket !== undefined || patch.periods !== undefined ? await db.views.find({ tenant, calendar_id: record._id }) : [];
    for (const view of views) {
      if (patch.bucket !== undefined && patch.bucket !== view.bucket) {
        bag.add(0, 'bucket', `The :attribute cannot change while the view ${view.name} uses this calendar.`);
      }
      if (patch.periods !== undefined && patch.periods < view.horizon) {
        bag.add(0, 'periods', `The :attribute must be at least ${view.horizon}, the horizon of the view ${view.name}.`);
      }
    }
    bag.throwIfAny();
  };
  const set: Partial<CalendarRecord> = {};
  if (patch.name !== undefined) Object.assign(set, { name: patch.name, name_lower: nameKey(patch.name) });
  if (patch.bucket !== undefined) set.bucket = patch.bucket as Bucket;
  if (patch.week_start !== undefined) set.week_start = patch.week_start as WeekDay;
  if (patch.start_date !== undefined) set.start_date = patch.start_date;
  if (patch.periods !== undefined) set.periods = patch.periods;
  return toCalendar(await updateValidated(db.calendars, record, validate, set));
}
