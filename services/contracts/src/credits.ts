/**
 * Credits are counted per calendar month in UTC. The gateway spends them and the tokens
 * service rebuilds and reports them, so both name the period and its meter key here.
 */

export interface CreditPeriod {
  /** `YYYY-MM`. */
  key: string;
  /** First instant of the month (inclusive). */
  start: Date;
  /** First instant of the next month (exclusive). */
  end: Date;
}

const PERIOD_KEY = /^(\d{4})-(0[1-9]|1[0-2])$/;
/** A balance outlives its month by a week, so late reads of the closed period still answer. */
const GRACE_SECONDS = 7 * 86_400;

function periodOfMonth(year: number, monthIndex: number): CreditPeriod {
  const start = new Date(Date.UTC(year, monthIndex, 1));
  const end = new Date(Date.UTC(year, monthIndex + 1, 1));
  return { key: start.toISOString().slice(0, 7), start, end };
}

export function creditPeriodOf(at: Date): CreditPeriod {
  return periodOfMonth(at.getUTCFullYear(), at.getUTCMonth());
}

/** The period a `YYYY-MM` key names, or null when it names none. */
export function creditPeriodByKey(key: string): CreditPeriod | null {
  const m = PERIOD_KEY.exec(key);
  return m ? periodOfMonth(Number(m[1]), Number(m[2]) - 1) : null;
}

/** The meter key of a tenant's balance for one period. */
export function creditKey(tenant: string, period: CreditPeriod): string {
  return `cr:${tenant}:${period.key}`;
}

/** Seconds the balance key lives from `now`: to the end of its period, plus the grace week. */
export function creditTtlSeconds(period: CreditPeriod, now: Date): number {
  return Math.max(1, Math.ceil((period.end.getTime() - now.getTime()) / 1000)) + GRACE_SECONDS;
}

/** `YYYY-MM-DD` of an instant, in UTC. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}
