import { ValidationError, fieldErrors, type FieldErrors } from '@supply/kit';
import type { supply_reference_v1 as pb } from '@supply/contracts';
import { MESSAGES } from '../common/field-errors';
import { assertBulkSize, byIds, distinct, findIn } from '../common/reads';
import { MAX_BULK, timestamp } from '../common/records';
import type { ReferenceDb } from '../db';
import type { ItemCustomerGroupRecord } from './repository';

const pairKey = (k: { item_id: number; customer_group_id: number }) => `${k.item_id}:${k.customer_group_id}`;

function toItemCustomerGroup(r: ItemCustomerGroupRecord): pb.ItemCustomerGroup {
  return { id: r._id, item_id: r.item_id, customer_group_id: r.customer_group_id };
}

/** The tenant's combinations among these pairs, by pair key. */
async function findPairs(db: ReferenceDb, tenant: string, keys: pb.ItemCustomerGroupKey[]): Promise<Map<string, ItemCustomerGroupRecord>> {
  if (keys.length === 0) return new Map();
  const groups = distinct(keys.map((k) => k.customer_group_id));
  const found = await findIn(
    db.itemCustomerGroups,
    { tenant, customer_group_id: { $in: groups } },
    'item_id',
    keys.map((k) => k.item_id),
  );
  return new Map(found.map((r) => [pairKey(r), r]));
}

/** Ids of every (item, customer group) pair, creating the missing ones; repeating a call creates nothing. */
export async function ensureItemCustomerGroups(
  db: ReferenceDb,
  tenant: string,
  req: pb.EnsureItemCustomerGroupsRequest,
): Promise<pb.EnsureItemCustomerGroupsResponse> {
  assertBulkSize(req.keys.length, 'item-customer-group keys');
  const [items, groups] = await Promise.all([
    byIds(
      db.items,
      tenant,
      req.keys.map((k) => k.item_id),
    ),
    byIds(
      db.customerGroups,
      tenant,
      req.keys.map((k) => k.customer_group_id),
    ),
  ]);
  const fields: FieldErrors = fieldErrors();
  req.keys.forEach((k, i) => {
    if (!items.has(k.item_id)) fields[`keys.${i}.item_id`] = [MESSAGES.exists.replace(':attribute', `keys.${i}.item_id`)];
    if (!groups.has(k.customer_group_id))
      fields[`keys.${i}.customer_group_id`] = [MESSAGES.exists.replace(':attribute', `keys.${i}.customer_group_id`)];
  });
  if (Object.keys(fields).length > 0) throw new ValidationError(fields);
  const now = timestamp();
  const unique = [...new Map(req.keys.map((k) => [pairKey(k), k])).values()];
  const { inserted } = await db.itemCustomerGroups.bulkUpsert(
    unique.map((k) => ({
      key: { tenant, item_id: k.item_id, customer_group_id: k.customer_group_id },
      set: {},
      setOnInsert: { created_at: now, updated_at: now },
    })),
  );
  const found = await findPairs(db, tenant, unique);
  return { ids: req.keys.map((k) => found.get(pairKey(k))!._id), created: inserted };
}

/** Combinations by ids and/or by (item, customer group) pairs, in id order; unknown ones left out. */
export async function getItemCustomerGroups(
  db: ReferenceDb,
  tenant: string,
  req: pb.GetItemCustomerGroupsRequest,
): Promise<pb.ItemCustomerGroupList> {
  assertBulkSize(req.ids.length + req.keys.length, 'ids and keys');
  const [byId, byPair] = await Promise.all([byIds(db.itemCustomerGroups, tenant, req.ids), findPairs(db, tenant, req.keys)]);
  const wanted = new Set(req.keys.map(pairKey));
  const records = new Map(byId);
  for (const [key, r] of byPair) if (wanted.has(key)) records.set(r._id, r);
  return { records: [...records.values()].sort((a, b) => a._id - b._id).map(toItemCustomerGroup) };
}

/** Every combination of the tenant in id order, walked by keyset. */
export async function listItemCustomerGroups(
  db: ReferenceDb,
  tenant: string,
  req: pb.ListItemCustomerGroupsRequest,
): Promise<pb.ListItemCustomerGroupsResponse> {
  const limit = Math.min(req.limit || 1000, MAX_BULK);
  const page = await db.itemCustomerGroups.find({ tenant, _id: { $gt: req.after_id } }, { sort: [['_id', 1]], limit: limit + 1 });
  return { records: page.slice(0, limit).map(toItemCustomerGroup), has_more: page.length > limit };
}
