/**
 * What the sync path needs to know about one entity, as data: its row fields and key, its
 * replace scope, the names its rows carry, how a checked row becomes the transactional
 * service's row, and which transactional calls write and delete its records. One file per
 * entity (sales.ts, inventory.ts) fills it in; index.ts lists them.
 */
import type { CallOverrides, Clients } from '@supply/kit';
import type { supply_transactional_v1 as tx } from '@supply/contracts';
import type { RowErrorRecord, SyncOptions } from '../../jobs/repository';
import type { LoadNames, NameKind } from '../names';
import type { CheckedRow } from '../rows';

/** A row the transactional service writes. */
export type TxRow = tx.SalesRow | tx.InventoryRow;

/** A valid row ready to write; `pair` is an item-customer-group combination the write must create first. */
export interface ResolvedRow {
  position: number;
  row: TxRow;
  pair?: { item_id: number; customer_group_id: number };
}

/** A checked row at its load position. */
export interface PositionedRow {
  position: number;
  row: CheckedRow;
}

/** What resolving rows needs from the load. */
export interface ResolveContext {
  rows_path: string;
  options: SyncOptions;
  call: CallOverrides;
}

/** The flags of one transactional apply. */
export interface ApplyFlags {
  dry_run: boolean;
  refuse_creates: boolean;
  refuse_updates: boolean;
  apply_id?: string;
}

export interface EntitySpec<E extends string = string> {
  entity: E;
  jobKind: string;
  /** Every field a row may carry, in the order a file's columns usually come. */
  fields: readonly string[];
  required: readonly string[];
  /** Fields whose (case-insensitive) values identify a record: a load holds each key once. */
  keyFields: readonly string[];
  /** How an error names the key, e.g. "item, customer group, sale type, timing interval and sell date". */
  keyWords: string;
  dateField: string;
  /** Replace scope field -> the row field it constrains and the kind of name it holds. */
  scope: Readonly<Record<string, { field: string; names: NameKind }>>;
  /** What the entity's records are called in messages. */
  noun: string;
  /** Row field -> the kind of name it holds; every one must name something the reference service knows. */
  names: ReadonlyArray<readonly [field: string, kind: NameKind]>;
  /**
   * Whether a row that would create a record is refused when allow_record_creation is
   * false. Sales answers that option on the item-customer-group combination instead (see
   * sales.ts), so a new record of a known combination is still written.
   */
  refusesNewRecords: boolean;
  /**
   * Turns rows whose names all resolved into transactional rows, in the order given; a row
   * the entity refuses at this point comes back as its errors instead.
   */
  resolveRows(
    rows: PositionedRow[],
    names: LoadNames,
    ctx: ResolveContext,
  ): Promise<Array<ResolvedRow | { position: number; errors: RowErrorRecord[] }>>;
  /** Writes (or, dry, only classifies) rows of this entity in the transactional service. */
  apply(clients: Clients, load_id: string, rows: TxRow[], flags: ApplyFlags, call: CallOverrides): Promise<tx.ApplyResult>;
  /** Deletes (or, dry, counts) the records inside the replace scope that the load did not write or match. */
  deleteOutsideLoad(
    clients: Clients,
    load_id: string,
    scopeIds: Record<string, number[]>,
    dry_run: boolean,
    call: CallOverrides,
  ): Promise<{ deleted: number }>;
}
