import { NotFoundError } from '@supply/kit';
import type { supply_reference_v1 as pb } from '@supply/contracts';
import { bucketStarts } from '../calendars/buckets';
import type { Bucket, CalendarRecord } from '../calendars/repository';
import { toCalendar } from '../calendars/service';
import { FieldErrorBag, MESSAGES } from '../common/field-errors';
import { assertBulkSize, byIds, findIn, findOwned, nameFilter, offsetPage } from '../common/reads';
import { nameKey } from '../common/records';
import { checkUnique } from '../common/unique';
import { insertValidated, updateValidated } from '../common/writes';
import type { ReferenceDb } from '../db';
import type { ViewRecord } from './repository';

function toView(r: ViewRecord, calendarName: string): pb.View {
  return {
    id: r._id,
    name: r.name,
    calendar_id: r.calendar_id,
    calendar_name: calendarName,
    bucket: r.bucket,
    horizon: r.horizon,
    item_location_ids: r.item_location_ids,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

async function presentViews(db: ReferenceDb, tenant: string, records: ViewRecord[]): Promise<pb.View[]> {
  const calendars = await byIds(
    db.calendars,
    tenant,
    records.map((r) => r.calendar_id),
  );
  return records.map((r) => toView(r, calendars.get(r.calendar_id)?.name ?? ''));
}

export async function listViews(db: ReferenceDb, tenant: string, req: pb.ListRequest): Promise<pb.Views> {
  return offsetPage(db.views, nameFilter(tenant, req.filter_name), req.page, (rs) => presentViews(db, tenant, rs));
}

/** The view with its calendar and the start dates of its buckets. */
export async function getView(db: ReferenceDb, tenant: string, req: pb.GetViewRequest): Promise<pb.GetViewResponse> {
  const record = req.id
    ? await findOwned(db.views, tenant, req.id, 'view')
    : await db.views.findOne({ tenant, name_lower: nameKey(req.name) });
  if (!record) throw new NotFoundError(`No view named ${req.name}.`);
  const calendar = await findOwned(db.calendars, tenant, record.calendar_id, 'calendar');
  return {
    view: toView(record, calendar.name),
    calendar: toCalendar(calendar),
    bucket_starts: bucketStarts(calendar, record.horizon),
  };
}

/** Bucket and horizon must fit the calendar; every item-location must be the tenant's. */
async function checkView(
  db: ReferenceDb,
  tenant: string,
  bag: FieldErrorBag,
  i: number,
  view: { bucket?: string; horizon?: number; item_location_ids?: number[] },
  calendar: CalendarRecord | undefined,
): Promise<void> {
  if (calendar && view.bucket !== undefined && view.bucket !== calendar.bucket) {
    bag.add(i, 'bucket', `The :attribute must be the calendar's bucket (${calendar.bucket}).`);
  }
  if (calendar && view.horizon !== undefined && view.horizon > calendar.periods) {
    bag.add(i, 'horizon', `The :attribute must not be greater than the calendar's periods (${calendar.periods}).`);
  }
  const ids = view.item_location_ids ?? [];
  assertBulkSize(ids.length, 'item-locations in a view');
  const known = await byIds(db.itemLocations, tenant, ids);
  const seen = new Set<number>();
  ids.forEach((id, j) => {
    if (!known.has(id)) bag.add(i, `item_location_ids.${j}`, MESSAGES.exists);
    else if (seen.has(id)) bag.add(i, `item_location_ids.${j}`, MESSAGES.distinct);
    seen.add(id);
  });
}

export async function createViews(db: ReferenceDb, tenant: string, req: pb.CreateViewsRequest): Promise<pb.Views> {
  let calendars: Array<CalendarRecord | undefined> = [];
  const validate = async () => {
    const bag = new FieldErrorBag(req.array_body);
    const byName = new Map(
      (
        await findIn(
          db.calendars,
          { tenant },
          'name_lower',
          req.records.map((r) => nameKey(r.calendar_name ?? '')),
        )
      ).map((c) => [c.name_lower, c]),
    );
    calendars = req.records.map((r) => byName.get(nameKey(r.calendar_name ?? '')));
    for (const [i, r] of req.records.entries()) {
      if (!r.name) bag.add(i, 'name', MESSAGES.required);
      if (!r.calendar_name) bag.add(i, 'calendar_name', MESSAGES.required);
      else if (!calendars[i]) bag.add(i, 'calendar_name', MESSAGES.exists);
      await checkView(db, tenant, bag, i, { ...r, item_location_ids: r.item_location_ids?.ids }, calendars[i]);
    }
    await checkUnique(
      db.views,
      tenant,
      'name',
      req.records.map((r, index) => ({ index, value: r.name })),
      bag,
    );
    bag.throwIfAny();
  };
  const created = await insertValidated(db.views, tenant, validate, () =>
    req.records.map((r, i) => {
      const calendar = calendars[i]!;
      return {
        name: r.name!,
        name_lower: nameKey(r.name!),
        calendar_id: calendar._id,
        bucket: calendar.bucket,
        horizon: r.horizon ?? calendar.periods,
        item_location_ids: r.item_location_ids?.ids ?? [],
      };
    }),
  );
  return { records: await presentViews(db, tenant, created), page: undefined };
}

export async function updateView(db: ReferenceDb, tenant: string, req: pb.UpdateViewRequest): Promise<pb.View> {
  const record = await findOwned(db.views, tenant, req.id, 'view');
  const patch = req.patch ?? {};
  const set: Partial<ViewRecord> = {};
  const validate = async () => {
    const bag = new FieldErrorBag(false);
    let calendar = await db.calendars.findOne({ tenant, _id: record.calendar_id });
    if (patch.calendar_name !== undefined) {
      calendar = await db.calendars.findOne({ tenant, name_lower: nameKey(patch.calendar_name) });
      if (calendar) Object.assign(set, { calendar_id: calendar._id, bucket: patch.bucket ?? calendar.bucket });
      else bag.add(0, 'calendar_name', MESSAGES.exists);
    }
    // A new calendar brings its bucket and re-checks the stored horizon against its periods.
    const merged = {
      bucket: set.bucket ?? patch.bucket ?? record.bucket,
      horizon: patch.horizon ?? record.horizon,
      item_location_ids: patch.item_location_ids?.ids,
    };
    await checkView(db, tenant, bag, 0, merged, calendar ?? undefined);
    await checkUnique(db.views, tenant, 'name', [{ index: 0, value: patch.name, selfId: record._id }], bag);
    bag.throwIfAny();
  };
  if (patch.name !== undefined) Object.assign(set, { name: patch.name, name_lower: nameKey(patch.name) });
  if (patch.bucket !== undefined) set.bucket = patch.bucket as Bucket;
  if (patch.horizon !== undefined) set.horizon = patch.horizon;
  if (patch.item_location_ids !== undefined) set.item_location_ids = patch.item_location_ids.ids;
  return (await presentViews(db, tenant, [await updateValidated(db.views, record, validate, set)]))[0]!;
}
