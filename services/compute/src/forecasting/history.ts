/**
 * A series' sales history as the forecasting library takes it: the History records of
 * the window on one timing interval, with the periods after the last sale up to the end
 * of the window marked missing (no record means no sale under the default imputation).
 */
import type { CallOverrides, Clients } from '@supply/kit';
import { supply_transactional_v1 as tpb } from '@supply/contracts';
import { addPeriods, formatIsoDate, parseIsoDate, type DatedValue, type Frequency } from '../engines/forecast/index';

/** What the workers need of transactional; the real client or, in tests, its functions on a store. */
export type SalesPort = Pick<Clients['transactional'], 'listSales' | 'applySales' | 'deleteSalesOutsideLoad'>;

/** Timing interval spans the library has a frequency for. */
const FREQUENCY_OF_SPAN: Readonly<Record<string, Frequency>> = {
  day: 'day',
  week: 'week',
  month: 'month',
  quarter: 'quarter',
  year: 'year',
};
const SPAN_ORDER = ['day', 'week', 'month', 'quarter', 'year'];
/** Records per ListSales call (its maximum). */
const LIST_LIMIT = 10_000;

export interface HistoryWindow {
  historyTypeId: number;
  /** YYYY-MM-DD, inclusive; null = open. */
  start: string | null;
  end: string | null;
}

/** The window's History records of each series, in id order. */
export async function readHistory(
  sales: SalesPort,
  call: CallOverrides,
  seriesIds: readonly number[],
  window: HistoryWindow,
): Promise<Map<number, tpb.SalesRecord[]>> {
  const bySeries = new Map<number, tpb.SalesRecord[]>(seriesIds.map((id) => [id, []]));
  let after = 0;
  for (;;) {
    // By series id only: the store answers it from its upsert-key index, whatever the names are now.
    const page = await sales.listSales(
      { after_id: after, limit: LIST_LIMIT, filter: tpb.SalesFilter.fromPartial({ item_customer_group_ids: [...seriesIds] }) },
      call,
    );
    for (const record of page.records) {
      if (record.sale_type_id !== window.historyTypeId) continue;
      if ((window.start && record.sell_date < window.start) || (window.end && record.sell_date > window.end)) continue;
      bySeries.get(record.item_customer_group_id)?.push(record);
    }
    if (!page.has_more || page.records.length === 0) return bySeries;
    after = page.records[page.records.length - 1]!.id;
  }
}

/** The last date at whole periods from `last` that is not after `end` (`last` itself when none is). */
export function gridEnd(last: string, frequency: Frequency, end: string): string {
  const from = parseIsoDate(last);
  const to = parseIsoDate(end);
  if (!from || !to || end <= last) return last;
  const days = (Date.parse(`${end}T00:00:00Z`) - Date.parse(`${last}T00:00:00Z`)) / 86_400_000;
  const months = (to.year - from.year) * 12 + (to.month - from.month);
  let k = { day: days, week: Math.floor(days / 7), month: months, quarter: Math.floor(months / 3), year: to.year - from.year }[frequency];
  while (k > 0 && formatIsoDate(addPeriods(from, frequency, k)) > end) k--;
  return formatIsoDate(addPeriods(from, frequency, k));
}

export interface SeriesInput {
  frequency: Frequency;
  interval: { id: number; span: string };
  uom: { id: number; name: string; abbr: string };
  points: DatedValue[];
}

/**
 * The input of one series from its History records: the timing interval most of them
 * use (ties: the finer), the unit of the latest record, and a missing value at the end of
 * the window's grid when the last sale came before it. Null when there are no records;
 * throws when the interval has no forecasting frequency.
 */
export function seriesInput(records: readonly tpb.SalesRecord[], historyEnd: string | null): SeriesInput | null {
  if (records.length === 0) return null;
  const counts = new Map<number, { span: string; count: number }>();
  for (const r of records) {
    const entry = counts.get(r.timing_interval_id) ?? { span: r.timing_interval_span, count: 0 };
    entry.count++;
    counts.set(r.timing_interval_id, entry);
  }
  const rank = (span: string) => (SPAN_ORDER.includes(span.toLowerCase()) ? SPAN_ORDER.indexOf(span.toLowerCase()) : SPAN_ORDER.length);
  const [intervalId, chosen] = [...counts.entries()].sort(
    ([idA, a], [idB, b]) => b.count - a.count || rank(a.span) - rank(b.span) || idA - idB,
  )[0]!;
  const frequency = FREQUENCY_OF_SPAN[chosen.span.toLowerCase()];
  if (!frequency) throw new RangeError(`its History is on the timing interval "${chosen.span}", which has no forecasting frequency`);

  const used = records.filter((r) => r.timing_interval_id === intervalId);
  let latest = used[0]!;
  for (const r of used) if (r.sell_date > latest.sell_date || (r.sell_date === latest.sell_date && r.id > latest.id)) latest = r;
  const points: DatedValue[] = used.map((r) => ({ date: r.sell_date, value: r.quantity }));
  if (historyEnd) {
    const end = gridEnd(latest.sell_date, frequency, historyEnd);
    if (end > latest.sell_date) points.push({ date: end, value: null });
  }
  return {
    frequency,
    interval: { id: intervalId, span: chosen.span },
    uom: { id: latest.uom_id, name: latest.uom_name, abbr: latest.uom_abbr },
    points,
  };
}
