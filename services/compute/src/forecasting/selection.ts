/**
 * Which series a request forecasts, resolved through the reference service: the
 * identifiers are checked (unknown or disagreeing ones are 422s on their field), the scope
 * follows from them or must agree with them, and the series are listed in id order.
 */
import { ValidationError, type Clients, fieldErrors, type FieldErrors } from '@supply/kit';
import { supply_reference_v1 as rpb } from '@supply/contracts';
import type { SeriesRef } from './repository';
import type { ForecastRequest, ForecastScope } from './request';

export type ReferencePort = Pick<Clients['reference'], 'resolveNames' | 'lookupIds' | 'getItemCustomerGroups' | 'listItemCustomerGroups'>;

/** Ids or names per reference call (the reference service's bulk limit). */
const BULK = 10_000;

export interface Selection {
  scope: ForecastScope;
  series: SeriesRef[];
}

interface Named {
  id: number;
  name: string;
  /** The request field that named it, for errors. */
  field: string;
}

function fail(field: string, message: string): never {
  throw new ValidationError({ [field]: [message] });
}

/** One record named by id and/or name; both must name the same one. */
async function identify(
  reference: ReferencePort,
  kind: 'item' | 'customer_group',
  name: string | null,
  id: number | null,
): Promise<Named | null> {
  if (name === null && id === null) return null;
  const errors: FieldErrors = fieldErrors();
  let byName: number | null = null;
  let byId: Named | null = null;
  const nameField = `${kind}_name`;
  const idField = `${kind}_id`;
  const label = kind.replace('_', ' ');
  if (name !== null) {
    const resolved = await reference.resolveNames(
      rpb.ResolveNamesRequest.fromPartial(kind === 'item' ? { items: [name] } : { customer_groups: [name] }),
    );
    byName = (kind === 'item' ? resolved.items : resolved.customer_groups)?.ids[0] || null;
    if (byName === null) errors[nameField] = [`The selected ${label} name is invalid.`];
  }
  if (id !== null) {
    const looked = await reference.lookupIds(
      rpb.LookupIdsRequest.fromPartial(kind === 'item' ? { item_ids: [id] } : { customer_group_ids: [id] }),
    );
    const record = (kind === 'item' ? looked.items : looked.customer_groups)[0];
    if (record) byId = { id: record.id, name: record.name, field: idField };
    else errors[idField] = [`The selected ${label} id is invalid.`];
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  if (byId && byName !== null && byId.id !== byName) fail(idField, `The ${label} id ${id} is not the ${label} named "${name}".`);
  return byId ?? { id: byName!, name: name!, field: nameField };
}

/** The scope the identifiers name, or the 422 when an explicit scope disagrees with them. */
function scopeOf(request: ForecastRequest, item: Named | null, group: Named | null): ForecastScope {
  const named: ForecastScope =
    request.item_customer_group_id !== null || (item && group) ? 'series' : item ? 'item' : group ? 'customer_group' : 'all';
  const asked = request.scope;
  if (asked === null || asked === named) return named;
  const needs: Record<ForecastScope, string> = {
    series:
      'The scope series needs item_customer_group_id, or an item (item_name or item_id) with a customer group (customer_group_name or customer_group_id).',
    item: 'The scope item needs an item (item_name or item_id) and no customer group.',
    customer_group: 'The scope customer_group needs a customer group (customer_group_name or customer_group_id) and no item.',
    all: 'The scope all forecasts every series; leave out the item and customer group identifiers.',
  };
  return fail('scope', needs[asked]);
}

async function namesOf(
  reference: ReferencePort,
  itemIds: number[],
  groupIds: number[],
): Promise<{ items: Map<number, string>; groups: Map<number, string> }> {
  const items = new Map<number, string>();
  const groups = new Map<number, string>();
  for (let i = 0; i < itemIds.length; i += BULK) {
    const looked = await reference.lookupIds(rpb.LookupIdsRequest.fromPartial({ item_ids: itemIds.slice(i, i + BULK) }));
    for (const r of looked.items) items.set(r.id, r.name);
  }
  for (let i = 0; i < groupIds.length; i += BULK) {
    const looked = await reference.lookupIds(rpb.LookupIdsRequest.fromPartial({ customer_group_ids: groupIds.slice(i, i + BULK) }));
    for (const r of looked.customer_groups) groups.set(r.id, r.name);
  }
  return { items, groups };
}

/** Every combination of the tenant that `keep` accepts, in id order. */
async function listCombinations(reference: ReferencePort, keep: (c: rpb.ItemCustomerGroup) => boolean): Promise<rpb.ItemCustomerGroup[]> {
  const kept: rpb.ItemCustomerGroup[] = [];
  let after = 0;
  for (;;) {
    const page = await reference.listItemCustomerGroups({ after_id: after, limit: BULK });
    for (const c of page.records) if (keep(c)) kept.push(c);
    if (!page.has_more || page.records.length === 0) return kept;
    after = page.records[page.records.length - 1]!.id;
  }
}

async function withNames(reference: ReferencePort, combinations: rpb.ItemCustomerGroup[]): Promise<SeriesRef[]> {
  const names = await namesOf(
    reference,
    [...new Set(combinations.map((c) => c.item_id))],
    [...new Set(combinations.map((c) => c.customer_group_id))],
  );
  return combinations.map((c) => ({
    item_customer_group_id: c.id,
    item_id: c.item_id,
    item_name: names.items.get(c.item_id) ?? '',
    customer_group_id: c.customer_group_id,
    customer_group_name: names.groups.get(c.customer_group_id) ?? '',
  }));
}

export async function resolveSelection(reference: ReferencePort, request: ForecastRequest): Promise<Selection> {
  const [item, group] = await Promise.all([
    identify(reference, 'item', request.item_name, request.item_id),
    identify(reference, 'customer_group', request.customer_group_name, request.customer_group_id),
  ]);
  const scope = scopeOf(request, item, group);

  if (scope === 'series') {
    const icgId = request.item_customer_group_id;
    const found = await reference.getItemCustomerGroups(
      icgId !== null ? { ids: [icgId], keys: [] } : { ids: [], keys: [{ item_id: item!.id, customer_group_id: group!.id }] },
    );
    const combination = found.records[0];
    if (!combination) {
      if (icgId !== null) fail('item_customer_group_id', 'The selected item customer group id is invalid.');
      fail(group!.field, `The item "${item!.name}" has no combination with the customer group "${group!.name}" to forecast.`);
    }
    if (item && combination.item_id !== item.id)
      fail('item_customer_group_id', `The item customer group id ${icgId} is not a combination of the item "${item.name}".`);
    if (group && combination.customer_group_id !== group.id) {
      fail('item_customer_group_id', `The item customer group id ${icgId} is not a combination of the customer group "${group.name}".`);
    }
    return { scope, series: await withNames(reference, [combination]) };
  }

  const keep =
    scope === 'item'
      ? (c: rpb.ItemCustomerGroup) => c.item_id === item!.id
      : scope === 'customer_group'
        ? (c: rpb.ItemCustomerGroup) => c.customer_group_id === group!.id
        : () => true;
  const combinations = await listCombinations(reference, keep);
  if (combinations.length === 0) {
    if (scope === 'item') fail(item!.field, `The item "${item!.name}" has no customer group combinations to forecast.`);
    if (scope === 'customer_group') fail(group!.field, `The customer group "${group!.name}" has no item combinations to forecast.`);
    fail('scope', 'The workspace has no item-customer-group combinations to forecast.');
  }
  return { scope, series: await withNames(reference, combinations) };
}
