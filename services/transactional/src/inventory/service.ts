import { ValidationError, type Collection } from '@supply/kit';
import type { supply_transactional_v1 as pb } from '@supply/contracts';
import { applyRows, deleteOutsideLoad } from '../common/apply';
import type { KeysetQuery } from '../common/keyset';
import { conditionsOf, readPage } from '../common/pages';
import { checkBatch, FieldCheck } from '../common/records';
import { INVENTORY_APPLY, INVENTORY_PAGES, toInventoryRecord, type InventoryRecordDoc } from './repository';

export interface InventoryDeps {
  inventory: Collection<InventoryRecordDoc>;
  now(): string;
}

function inventoryConditions(tenant: string, filter: pb.InventoryFilter | undefined): Pick<KeysetQuery, 'equals' | 'ranges'> {
  return conditionsOf(
    tenant,
    { item_name_lower: filter?.item_names, location_name_lower: filter?.location_names },
    {
      field: 'inventory_date',
      from: filter?.inventory_date_from ?? '',
      to: filter?.inventory_date_to ?? '',
      names: ['inventory_date_from', 'inventory_date_to'],
    },
  );
}

export async function queryInventory(
  deps: InventoryDeps,
  tenant: string,
  request: pb.QueryInventoryRequest,
): Promise<pb.QueryInventoryResponse> {
  const { records, page } = await readPage(deps.inventory, INVENTORY_PAGES, inventoryConditions(tenant, request.filter), request.page);
  return { records: records.map(toInventoryRecord), page };
}

function checkInventoryRows(rows: readonly pb.InventoryRow[]): void {
  checkBatch('rows', rows.length);
  const check = new FieldCheck();
  rows.forEach((row, i) => {
    const at = (field: string) => `rows.${i}.${field}`;
    for (const field of ['item_id', 'location_id', 'uom_id'] as const) check.id(at(field), row[field]);
    for (const field of ['item_name', 'location_name', 'uom_name', 'uom_abbr'] as const) check.name(at(field), row[field]);
    for (const field of ['bin_name', 'lot_name'] as const) {
      if (row[field].length > 255) check.add(at(field), `The ${at(field)} field must not be greater than 255 characters.`);
    }
    check.date(at('inventory_date'), row.inventory_date);
    check.number(at('quantity'), row.quantity, 0);
  });
  check.done();
}

export async function applyInventory(deps: InventoryDeps, tenant: string, request: pb.ApplyInventoryRequest): Promise<pb.ApplyResult> {
  checkInventoryRows(request.rows);
  return applyRows(deps.inventory, INVENTORY_APPLY, request.rows, {
    tenant,
    loadId: request.load_id,
    refuseCreates: request.refuse_creates,
    refuseUpdates: request.refuse_updates,
    dryRun: request.dry_run,
    now: deps.now(),
    applyId: request.apply_id,
  });
}

export async function deleteInventoryOutsideLoad(
  deps: InventoryDeps,
  tenant: string,
  request: pb.DeleteInventoryOutsideLoadRequest,
): Promise<pb.DeleteResult> {
  if (request.location_ids.length === 0 && request.item_ids.length === 0) {
    throw new ValidationError({ scope: ['A replace needs a scope: location_ids or item_ids.'] });
  }
  const scope = {
    tenant,
    ...(request.location_ids.length > 0 ? { location_id: { $in: request.location_ids } } : {}),
    ...(request.item_ids.length > 0 ? { item_id: { $in: request.item_ids } } : {}),
  };
  return { deleted: await deleteOutsideLoad(deps.inventory, scope, request.load_id, request.dry_run) };
}
