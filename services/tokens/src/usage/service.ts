import {
  AppError,
  isAppError,
  ValidationError,
  type Bus,
  type Delivery,
  fieldErrors,
  type FieldErrors,
  type Logger,
  type Meter,
} from '@supply/kit';
import {
  MAX_USAGE_DAYS,
  USAGE_GROUPS,
  RECORDS_USAGE_QUEUE,
  USAGE_QUEUE,
  creditKey,
  creditPeriodByKey,
  creditPeriodOf,
  creditTtlSeconds,
  isUsageBatch,
  type CreditPeriod,
  type UsageGroup,
  type supply_tokens_v1,
} from '@supply/contracts';
import type { IdentityStore } from '../repository';
import { requireTenant } from '../tenants/service';
import type { UsageLedger } from './ledger';

export interface UsageDeps {
  identity: IdentityStore;
  ledger: UsageLedger;
  meter: Meter;
  now(): Date;
}

/** Raw records (the batches) are kept two periods and a bit; the day aggregates for good. */
const RAW_RETENTION_DAYS = 62;
const PRUNE_INTERVAL_MS = 6 * 3_600_000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A `YYYY-MM-DD` that names a real day. */
export function isDay(value: string): boolean {
  return DAY.test(value) && new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10) === value;
}

function period(key: string): CreditPeriod {
  const p = creditPeriodByKey(key);
  if (!p) throw new ValidationError({ period: ['The period must be a month as YYYY-MM.'] });
  return p;
}

export async function getCredits(
  deps: UsageDeps,
  tenant: string,
  req: supply_tokens_v1.GetCreditsRequest,
): Promise<supply_tokens_v1.Credits> {
  const p = period(req.period);
  const [record, used] = await Promise.all([requireTenant(deps.identity, tenant), deps.ledger.used(tenant, p)]);
  return {
    period: p.key,
    period_start: p.start.toISOString(),
    period_end: p.end.toISOString(),
    allowance: record.monthly_credits,
    used,
  };
}

export async function getUsage(
  deps: UsageDeps,
  tenant: string,
  req: supply_tokens_v1.GetUsageRequest,
): Promise<supply_tokens_v1.UsageReport> {
  const fields: FieldErrors = fieldErrors();
  if (!isDay(req.from)) fields.from = ['The from field must be a date as YYYY-MM-DD.'];
  if (!isDay(req.to)) fields.to = ['The to field must be a date as YYYY-MM-DD.'];
  const unknown = req.group_by.filter((g) => !(USAGE_GROUPS as readonly string[]).includes(g));
  if (unknown.length) fields.group_by = [`The group by field may only name ${USAGE_GROUPS.join(', ')}.`];
  if (Object.keys(fields).length) throw new ValidationError(fields);
  if (req.from > req.to) throw new ValidationError({ to: ['The to field must be a date after or equal to from.'] });
  if ((Date.parse(req.to) - Date.parse(req.from)) / 86_400_000 + 1 > MAX_USAGE_DAYS) {
    throw new ValidationError({ to: [`The to field must be at most ${MAX_USAGE_DAYS} days after from.`] });
  }
  const groupBy = (req.group_by.length ? req.group_by : USAGE_GROUPS) as UsageGroup[];
  const rows = await deps.ledger.report(tenant, req.from, req.to, groupBy);

  const tokenIds = [...new Set(rows.map((r) => r.token_id).filter((id): id is number => id !== null))];
  const names = new Map<number, string>();
  if (tokenIds.length) {
    for (const t of await deps.identity.tokens.find({ _id: { $in: tokenIds }, tenant })) names.set(t._id, t.name);
  }
  return {
    rows: rows.map((r) => ({
      day: r.day ?? '',
      method: r.method ?? '',
      endpoint: r.endpoint ?? '',
      token_id: r.token_id ?? 0,
      token_name: r.token_id === null ? '' : (names.get(r.token_id) ?? ''),
      requests: r.requests,
      credits: r.credits,
    })),
    requests: rows.reduce((n, r) => n + r.requests, 0),
    credits: rows.reduce((n, r) => n + r.credits, 0),
  };
}

/**
 * After the operator changes a tenant's monthly credits, the current period's balance is
 * rebuilt from the usage records: new allowance minus what was recorded (never below 0).
 */
export async function resetCreditBalance(deps: UsageDeps, tenant: string): Promise<void> {
  const now = deps.now();
  const p = creditPeriodOf(now);
  const [record, used] = await Promise.all([requireTenant(deps.identity, tenant), deps.ledger.used(tenant, p)]);
  try {
    await deps.meter.setCreditBalance(creditKey(tenant, p), Math.max(0, record.monthly_credits - used), creditTtlSeconds(p, now));
  } catch (error) {
    if (!(isAppError(error) && error.code === 'unavailable')) throw error;
    throw new AppError(
      'unavailable',
      `The limits are saved, but the credit balance could not be reset (${error.message}); run the command again.`,
    );
  }
}

/**
 * Folds batches stored but never marked folded, then the gateways' usage batches as they
 * arrive (totals, and the per-request records earlier gateways sent to their own queue), and
 * prunes old stored batches now and then. Returns the stop function.
 */
export async function startUsageFolding(deps: UsageDeps & { bus: Bus; logger: Logger }): Promise<() => Promise<void>> {
  const recovered = await deps.ledger.recover();
  if (recovered) deps.logger.warn({ batches: recovered }, 'folded usage batches a previous run left unfolded');
  const fold = async (body: unknown, delivery: Delivery): Promise<void> => {
    if (!isUsageBatch(body)) {
      deps.logger.error({ messageId: delivery.messageId }, 'dropped a usage batch of the wrong shape');
      return;
    }
    await deps.ledger.fold(body);
  };
  const subscriptions = await Promise.all([
    deps.bus.consume<unknown>(USAGE_QUEUE, fold, { prefetch: 4 }),
    deps.bus.consume<unknown>(RECORDS_USAGE_QUEUE, fold, { prefetch: 1 }),
  ]);
  const prune = () =>
    deps.ledger
      .prune(new Date(deps.now().getTime() - RAW_RETENTION_DAYS * 86_400_000))
      .catch((err: unknown) => deps.logger.error({ err }, 'pruning usage records failed'));
  void prune();
  const timer = setInterval(prune, PRUNE_INTERVAL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await Promise.all(subscriptions.map((s) => s.close()));
  };
}
