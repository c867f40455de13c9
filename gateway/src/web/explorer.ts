/**
 * The forecast explorer page's data: for an item-location, the series of its item (one per
 * customer group) from the newest forecast run that forecast the item, the chosen series'
 * History, forecast with 80%/95% intervals, model and accuracy, and the item-location's
 * stored supply plan (projected on-hand, planned receipts) with its safety stock.
 */
import type { CallOverrides, Clients } from '@supply/kit';
import type { supply_compute_v1 as cpb, supply_reference_v1 as rpb } from '@supply/contracts';
import { esc, layout } from './html';

/** Runs looked through (newest first) for the item's latest forecast. */
const RUNS_SEARCHED = 50;
const ITEM_LOCATIONS_LISTED = 1000;
const HISTORY_POINTS = 5000;
const PLAN_ROWS = 1000;

export interface ExplorerData {
  itemLocations: Array<{ id: number; label: string }>;
  itemLocation: {
    id: number;
    item_name: string;
    location_name: string;
    safety_stock: number;
    service_level: number;
    lead_time: number;
  } | null;
  series: Array<{ customer_group_id: number; customer_group_name: string }>;
  selected: {
    customer_group_name: string;
    run_id: number;
    model: string;
    series_class: string;
    parameters: Record<string, number>;
    validation: { mase: number | null; rmsse: number | null; bias: number | null } | null;
    history: Array<{ date: string; quantity: number }>;
    forecast: Array<{ date: string; forecast: number; lo80: number; hi80: number; lo95: number; hi95: number }>;
  } | null;
  plan: {
    view_name: string;
    plan_run_id: number;
    rows: Array<{ period_start: string; projected_available: number; planned_receipts: number; gross_requirements: number }>;
  } | null;
}

/** The newest run's diagnostics of every series of the item it forecast (empty: the item was never forecast). */
async function latestSeries(
  clients: Clients,
  call: CallOverrides,
  itemName: string,
): Promise<{ run: number; series: cpb.ForecastSeriesDiagnostics[] }> {
  const runs = await clients.compute.listForecastRuns({ per_page: RUNS_SEARCHED, after_id: 0, backward: false }, call);
  for (const run of runs.runs) {
    if (run.forecast_count === 0) continue;
    const found = await clients.compute.getForecastRun(
      {
        run_id: run.id,
        filter: { item_names: [itemName], customer_group_names: [], models: [], series_classes: [], statuses: ['forecast'] },
        per_page: 1000,
        after_position: -1,
        backward: false,
      },
      call,
    );
    if (found.series.length > 0) return { run: run.id, series: found.series };
  }
  return { run: 0, series: [] };
}

export async function explorerData(
  clients: Clients,
  call: CallOverrides,
  query: { item_location_id?: number; customer_group_id?: number },
): Promise<ExplorerData> {
  const list = await clients.reference.listItemLocations(
    { page: { page: 1, per_page: ITEM_LOCATIONS_LISTED, total: 0 }, filter_name: '', filter_item_name: '', filter_location_name: '' },
    call,
  );
  const itemLocations = list.records.map((r) => ({ id: r.id, label: `${r.item_name} @ ${r.location_name}` }));
  const il: rpb.ItemLocation | undefined = list.records.find((r) => r.id === query.item_location_id) ?? list.records[0];
  if (!il) return { itemLocations, itemLocation: null, series: [], selected: null, plan: null };
  const [latest, plans] = await Promise.all([
    latestSeries(clients, call, il.item_name),
    clients.transactional.querySupplyPlans(
      {
        filter: {
          item_names: [il.item_name],
          location_names: [il.location_name],
          view_names: [],
          period_start_from: '',
          period_start_to: '',
        },
        page: { per_page: PLAN_ROWS, sort: [{ field: 'period_start', descending: false }], after: '', backward: false },
      },
      call,
    ),
  ]);
  const chosen = latest.series.find((s) => s.series!.customer_group_id === query.customer_group_id) ?? latest.series[0];
  let selected: ExplorerData['selected'] = null;
  if (chosen) {
    const history = await clients.transactional.querySales(
      {
        filter: {
          item_names: [],
          customer_group_names: [],
          sale_type_names: ['History'],
          timing_intervals: [],
          sell_date_from: '',
          sell_date_to: '',
          item_customer_group_ids: [chosen.series!.item_customer_group_id],
        },
        page: { per_page: HISTORY_POINTS, sort: [{ field: 'sell_date', descending: false }], after: '', backward: false },
        include_hierarchy: false,
      },
      call,
    );
    const v = chosen.validation;
    selected = {
      customer_group_name: chosen.series!.customer_group_name,
      run_id: latest.run,
      model: chosen.model,
      series_class: chosen.series_class,
      parameters: { ...chosen.parameters },
      validation: v ? { mase: v.mase ?? null, rmsse: v.rmsse ?? null, bias: v.bias ?? null } : null,
      history: history.records.map((r) => ({ date: r.sell_date, quantity: r.quantity })),
      forecast: chosen.periods.map((p) => ({ date: p.date, forecast: p.forecast, lo80: p.lo80, hi80: p.hi80, lo95: p.lo95, hi95: p.hi95 })),
    };
  }
  // The latest plan of the item-location (a re-plan replaces its rows per view; the newest run wins).
  const newest = plans.records.reduce((max, r) => Math.max(max, r.plan_run_id), 0);
  const rows = plans.records.filter((r) => r.plan_run_id === newest);
  return {
    itemLocations,
    itemLocation: {
      id: il.id,
      item_name: il.item_name,
      location_name: il.location_name,
      safety_stock: il.safety_stock,
      service_level: il.service_level,
      lead_time: il.lead_time,
    },
    series: latest.series.map((s) => ({
      customer_group_id: s.series!.customer_group_id,
      customer_group_name: s.series!.customer_group_name,
    })),
    selected,
    plan:
      rows.length > 0
        ? {
            view_name: rows[0]!.view_name,
            plan_run_id: newest,
            rows: rows.map((r) => ({
              period_start: r.bucket!.period_start,
              projected_available: r.bucket!.projected_available,
              planned_receipts: r.bucket!.planned_receipts,
              gross_requirements: r.bucket!.gross_requirements,
            })),
          }
        : null,
  };
}

const fmt = (v: number | null | undefined, digits = 3) => (v === null || v === undefined ? '—' : Number(v.toFixed(digits)).toString());

/** JSON for a `<script type="application/json">` element: nothing in it can close the element. */
const embedded = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');

export function explorerPage(opts: { slug: string; tenantName: string; email: string; csrf: string; data: ExplorerData }): string {
  const { slug, data } = opts;
  const il = data.itemLocation;
  const s = data.selected;
  const options = data.itemLocations
    .map((o) => `<option value="${o.id}"${il && o.id === il.id ? ' selected' : ''}>${esc(o.label)}</option>`)
    .join('');
  const groups = data.series
    .map(
      (g) =>
        `<option value="${g.customer_group_id}"${s && g.customer_group_name === s.customer_group_name ? ' selected' : ''}>${esc(g.customer_group_name)}</option>`,
    )
    .join('');
  const safety = il
    ? il.service_level > 0
      ? `service level ${esc(fmt(il.service_level * 100, 2))}% (sized from the forecast intervals over the lead time; fixed fallback ${esc(fmt(il.safety_stock))})`
      : `fixed ${esc(fmt(il.safety_stock))}`
    : '';
  const model = s
    ? `<dl class="facts"><dt>Customer group</dt><dd>${esc(s.customer_group_name)}</dd><dt>Model</dt><dd id="model">${esc(s.model)}</dd>
<dt>Demand class</dt><dd>${esc(s.series_class)}</dd><dt>Parameters</dt><dd>${esc(
        Object.entries(s.parameters)
          .map(([k, v]) => `${k}=${fmt(v, 4)}`)
          .join(', ') || '—',
      )}</dd>
<dt>Validation</dt><dd id="accuracy">MASE ${esc(fmt(s.validation?.mase))} · RMSSE ${esc(fmt(s.validation?.rmsse))} · bias ${esc(fmt(s.validation?.bias))}</dd>
<dt>Forecast run</dt><dd>${s.run_id}</dd></dl>`
    : '<p class="muted" id="no-forecast">This item has not been forecast yet: run POST /forecasts/generate for it.</p>';
  return layout({
    title: `Forecast explorer · ${opts.tenantName}`,
    head: '<link rel="icon" href="data:,"><link rel="stylesheet" href="/assets/uplot.css"><script src="/assets/uplot.js" defer></script><script src="/assets/forecast-explorer.js" defer></script>',
    header: `<span>${esc(opts.email)} · ${esc(opts.tenantName)}
<form method="post" action="/${esc(slug)}/logout" class="logout"><input type="hidden" name="_token" value="${esc(opts.csrf)}"><button type="submit">Log out</button></form></span>`,
    body: `<h1>Forecast explorer</h1>
<section><form method="get" action="/${esc(slug)}/forecasts/explorer" id="pick">
<label>Item-location <br><select name="item_location_id" id="item-location">${options}</select></label>
${groups ? `<label>Customer group (series) <br><select name="customer_group_id" id="customer-group">${groups}</select></label>` : ''}
<p><button type="submit">Show</button></p></form></section>
<section><h2>History and forecast${s ? ` — ${esc(il!.item_name)} / ${esc(s.customer_group_name)}` : ''}</h2>${model}
<div id="forecast-chart" class="chart"></div><p class="muted">Bands: 80% (dark) and 95% (light) prediction intervals.</p></section>
<section><h2>Supply plan${il ? ` — ${esc(il.item_name)} at ${esc(il.location_name)}` : ''}</h2>
<p>Safety stock: <span id="safety-stock">${safety}</span>${il ? ` · lead time ${il.lead_time} buckets` : ''}${data.plan ? ` · plan run ${data.plan.plan_run_id}, view ${esc(data.plan.view_name)}` : ''}</p>
${data.plan ? '<div id="plan-chart" class="chart"></div>' : '<p class="muted" id="no-plan">No supply plan stored for this item-location yet: run POST /supply-plans/generate.</p>'}
</section>
<script type="application/json" id="explorer-data">${embedded(data)}</script>`,
  });
}
