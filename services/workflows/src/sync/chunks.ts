/**
 * One chunk of a load, end to end: each row checked on its own, names resolved in bulk
 * (reference), the outcome of every valid row found by a transactional dry run, then the
 * valid rows written in one transactional apply. The options decide which outcomes are
 * errors: a match without allow_record_update, a missing item-customer-group combination
 * without allow_record_creation (sales), a new record without it (inventory).
 */
import type { CallOverrides, Clients } from '@supply/kit';
import { supply_transactional_v1 as tx } from '@supply/contracts';
import { MAX_JOB_ERRORS, type RowErrorRecord, type SyncOptions } from '../jobs/repository';
import { recordToRow } from './csv';
import type { EntitySpec, ResolvedRow, TxRow } from './entities';
import { LoadNameCache } from './names';
import { checkRow, nameKey, type CheckedRow } from './rows';
import type { ChunkDoc, RowOutcome } from './staging';

/** What a chunk needs to know about its load. */
export interface LoadContext {
  tenant: string;
  /** Marks every record the load writes or matches; replace deletes what lacks it. */
  load_id: string;
  spec: EntitySpec;
  scope: Record<string, string> | null;
  options: SyncOptions;
  rows_path: string;
  /** File imports: the field of each column. */
  columns: Array<string | null> | null;
  /** Context and deadline for the internal calls. */
  call: CallOverrides;
}

export interface ChunkPlan {
  outcomes: RowOutcome[];
  errors: RowErrorRecord[];
  errors_count: number;
}

export interface PlannedChunk {
  plan: ChunkPlan;
  resolved: Map<number, ResolvedRow>;
}

class ChunkErrors {
  readonly list: RowErrorRecord[] = [];
  readonly invalid = new Set<number>();
  add(errors: RowErrorRecord[], position: number): void {
    if (errors.length === 0) return;
    this.invalid.add(position);
    this.list.push(...errors);
  }
}

const OUTCOME: Partial<Record<tx.ApplyOutcome, RowOutcome>> = {
  [tx.ApplyOutcome.APPLY_OUTCOME_CREATED]: 'create',
  [tx.ApplyOutcome.APPLY_OUTCOME_UPDATED]: 'update',
  [tx.ApplyOutcome.APPLY_OUTCOME_UNCHANGED]: 'unchanged',
};

/** Distinct values (ignoring case) of one field. */
function distinctOf(rows: CheckedRow[], field: string): string[] {
  const seen = new Map<string, string>();
  for (const row of rows) {
    const value = row[field];
    if (value && !seen.has(nameKey(value))) seen.set(nameKey(value), value);
  }
  return [...seen.values()];
}

export class ChunkProcessor {
  private readonly names: LoadNameCache;

  constructor(private readonly clients: Clients) {
    this.names = new LoadNameCache(clients);
  }

  /** Each row's own checks, in load positions; file records become rows through the column map first. */
  private check(ctx: LoadContext, chunk: ChunkDoc, errors: ChunkErrors): Array<{ position: number; row: CheckedRow }> {
    const duplicates = new Map(chunk.duplicates ?? []);
    const checked: Array<{ position: number; row: CheckedRow }> = [];
    chunk.rows.forEach((raw, i) => {
      const position = chunk.first_row + i;
      const path = `${ctx.rows_path}.${position}`;
      let input = raw;
      if (ctx.columns) {
        input = recordToRow(raw as unknown[], ctx.columns);
        if (input === null) {
          const cells = (raw as unknown[]).length;
          errors.add(
            [
              {
                row: position,
                field: path,
                message: `The ${path} record has ${cells} ${cells === 1 ? 'field' : 'fields'}; the header has ${ctx.columns.length}.`,
              },
            ],
            position,
          );
          return;
        }
      }
      const result = checkRow(ctx.spec, input, position, path, ctx.scope);
      const earlier = duplicates.get(position);
      if (earlier !== undefined) {
        result.errors.push({
          row: position,
          field: path,
          message: `The ${path} row has the same ${ctx.spec.keyWords} as row ${earlier}; a load holds each ${ctx.spec.noun} once.`,
        });
      }
      if (result.errors.length > 0 || !result.row) errors.add(result.errors, position);
      else checked.push({ position, row: result.row });
    });
    return checked;
  }

  /** Resolves the names of checked rows in bulk; rows naming something unknown become errors. */
  private async resolve(
    ctx: LoadContext,
    checked: Array<{ position: number; row: CheckedRow }>,
    errors: ChunkErrors,
  ): Promise<Map<number, ResolvedRow>> {
    const resolved = new Map<number, ResolvedRow>();
    if (checked.length === 0) return resolved;
    const fields = ctx.spec.names;
    const names = this.names.of(ctx.load_id);
    await names.resolve(
      Object.fromEntries(
        fields.map(([field, kind]) => [
          kind,
          distinctOf(
            checked.map((c) => c.row),
            field,
          ),
        ]),
      ),
      ctx.call,
    );
    const known = checked.filter(({ position, row }) => {
      const rowErrors: RowErrorRecord[] = [];
      for (const [field, kind] of fields) {
        if (names.id(kind, row[field]!) === 0) {
          const path = `${ctx.rows_path}.${position}.${field}`;
          rowErrors.push({ row: position, field: path, message: `The selected ${path} is invalid.` });
        }
      }
      errors.add(rowErrors, position);
      return rowErrors.length === 0;
    });
    for (const r of await ctx.spec.resolveRows(known, names, ctx)) {
      if ('errors' in r) errors.add(r.errors, r.position);
      else resolved.set(r.position, r);
    }
    return resolved;
  }

  private applyRows(
    ctx: LoadContext,
    rows: TxRow[],
    flags: { dry_run: boolean; refuse_creates: boolean; refuse_updates: boolean; apply_id?: string },
  ): Promise<tx.ApplyResult> {
    return ctx.spec.apply(this.clients, ctx.load_id, rows, flags, ctx.call);
  }

  /** Decides what every row of the chunk does, writing nothing. */
  async plan(ctx: LoadContext, chunk: ChunkDoc): Promise<PlannedChunk> {
    const errors = new ChunkErrors();
    const resolved = await this.resolve(ctx, this.check(ctx, chunk, errors), errors);
    const outcomes = new Map<number, RowOutcome>();
    // A combination that does not exist yet has no records: its rows can only create.
    const existing = [...resolved.values()].filter((r) => !r.pair);
    for (const r of resolved.values()) if (r.pair) outcomes.set(r.position, 'create');
    if (existing.length > 0) {
      const dry = await this.applyRows(
        ctx,
        existing.map((r) => r.row),
        { dry_run: true, refuse_creates: false, refuse_updates: false },
      );
      existing.forEach((r, i) => outcomes.set(r.position, OUTCOME[dry.outcomes[i]!] ?? 'create'));
    }
    for (const [position, outcome] of outcomes) {
      const path = `${ctx.rows_path}.${position}`;
      let message: string | null = null;
      if (outcome !== 'create' && !ctx.options.allow_record_update) {
        message = `A ${ctx.spec.noun} with this ${ctx.spec.keyWords} already exists, and allow_record_update is false.`;
      } else if (outcome === 'create' && ctx.spec.refusesNewRecords && !ctx.options.allow_record_creation) {
        message = `No ${ctx.spec.noun} with this ${ctx.spec.keyWords} exists, and allow_record_creation is false.`;
      }
      if (message) {
        errors.add([{ row: position, field: path, message: `The ${path} row is refused: ${message}` }], position);
        resolved.delete(position);
      }
    }
    const list = errors.list.sort((a, b) => a.row - b.row);
    return {
      plan: {
        outcomes: chunk.rows.map((_, i) => {
          const position = chunk.first_row + i;
          return errors.invalid.has(position) ? 'invalid' : (outcomes.get(position) ?? 'invalid');
        }),
        errors: list.slice(0, MAX_JOB_ERRORS),
        errors_count: list.length,
      },
      resolved,
    };
  }

  /** The rows the plan found valid, names resolved (again, on a redelivery). */
  private async writesOf(ctx: LoadContext, chunk: ChunkDoc, plan: ChunkPlan, resolved?: Map<number, ResolvedRow>): Promise<ResolvedRow[]> {
    let rows = resolved;
    if (!rows) {
      const errors = new ChunkErrors();
      rows = await this.resolve(ctx, this.check(ctx, chunk, errors), errors);
    }
    return plan.outcomes.flatMap((outcome, i) => {
      const row = outcome === 'invalid' ? undefined : rows.get(chunk.first_row + i);
      return row ? [row] : [];
    });
  }

  private applyFlags(ctx: LoadContext, chunk: ChunkDoc, dryRun: boolean) {
    return {
      dry_run: dryRun,
      refuse_creates: ctx.spec.refusesNewRecords && !ctx.options.allow_record_creation,
      refuse_updates: !ctx.options.allow_record_update,
      // The chunk's id marks what it writes, so a repeat reports what the first attempt did.
      apply_id: chunk._id,
    };
  }

  /**
   * Writes the rows the plan found valid and answers what the store did with them (for a
   * redelivery: what the first attempt did). `resolved` comes from a plan made in the same
   * delivery; a redelivery resolves the names again and keeps to the first plan's choice.
   */
  async apply(ctx: LoadContext, chunk: ChunkDoc, plan: ChunkPlan, resolved?: Map<number, ResolvedRow>): Promise<AppliedCounts> {
    const writes = await this.writesOf(ctx, chunk, plan, resolved);
    if (writes.length === 0) return { created: 0, updated: 0, unchanged: 0, rejected: 0 };
    const missing = writes.filter((w) => w.pair);
    if (missing.length > 0) {
      const ensured = await this.clients.reference.ensureItemCustomerGroups({ keys: missing.map((w) => w.pair!) }, ctx.call);
      missing.forEach((w, i) => ((w.row as tx.SalesRow).item_customer_group_id = ensured.ids[i]!));
    }
    const result = await this.applyRows(
      ctx,
      writes.map((w) => w.row),
      this.applyFlags(ctx, chunk, false),
    );
    return {
      created: Number(result.created),
      updated: Number(result.updated),
      unchanged: Number(result.unchanged),
      rejected: Number(result.rejected),
    };
  }

  /** What earlier attempts at this chunk committed, writing nothing (a chunk given up on may be part written). */
  async committed(ctx: LoadContext, chunk: ChunkDoc, plan: ChunkPlan): Promise<AppliedCounts> {
    // Rows of combinations not created yet cannot have been written.
    const writes = (await this.writesOf(ctx, chunk, plan)).filter((w) => !w.pair);
    if (writes.length === 0) return { created: 0, updated: 0, unchanged: 0, rejected: 0 };
    const result = await this.applyRows(
      ctx,
      writes.map((w) => w.row),
      this.applyFlags(ctx, chunk, true),
    );
    return {
      created: Number(result.already_created),
      updated: Number(result.already_updated),
      unchanged: Number(result.already_unchanged),
      rejected: 0,
    };
  }
}

/** What transactional did with a chunk's rows. */
export interface AppliedCounts {
  created: number;
  updated: number;
  unchanged: number;
  rejected: number;
}

/** A plan's counts as the job shows them. */
export function planCounts(plan: ChunkPlan): { created: number; updated: number; unchanged: number; failed: number } {
  const counts = { created: 0, updated: 0, unchanged: 0, failed: 0 };
  for (const outcome of plan.outcomes) {
    if (outcome === 'create') counts.created++;
    else if (outcome === 'update') counts.updated++;
    else if (outcome === 'unchanged') counts.unchanged++;
    else counts.failed++;
  }
  return counts;
}
