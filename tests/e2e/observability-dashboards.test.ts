import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { freePortRange } from '../support/ports';
import { startSystem, type TestSystem } from '../support/system';

const DASHBOARD = 'deploy/observability/grafana-dashboard.json';
const ALERTS = 'deploy/observability/prometheus-alerts.yaml';
/** Labels Prometheus adds at scrape time, and the bucket bound of histograms. */
const SCRAPE_LABELS = new Set(['job', 'instance', 'le']);
const METRIC = /\b((?:supply|process|nodejs)_[a-z0-9_]+)\b(\{[^}]*\})?/g;

/** Every PromQL expression of the dashboard's panels. */
function dashboardExpressions(): Array<{ where: string; expr: string }> {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    panels: Array<{ title: string; type: string; targets?: Array<{ expr: string }> }>;
  };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr })));
}

function alertExpressions(): Array<{ where: string; expr: string }> {
  const rules = parse(readFileSync(ALERTS, 'utf8')) as {
    groups: Array<{ name: string; rules: Array<{ alert: string; expr: string; labels?: Record<string, string> }> }>;
  };
  return rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })));
}

describe('observability: the Grafana dashboard and Prometheus alerts name only metrics the service exports', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  /** Sample names the scrape announces (`# TYPE`), with a histogram's _bucket, _count and _sum. */
  const exported = new Set<string>();

  before(async () => {
    const port = await freePortRange(1);
    sys = await startSystem({ env: { METRICS_PORT: String(port) } });
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      exported.add(m[1]!);
      if (m[2] === 'histogram') for (const suffix of ['_bucket', '_count', '_sum']) exported.add(`${m[1]}${suffix}`);
    }
  });
  after(() => sys?.stop());

  it('has alerts for error rate, p99 latency, queue age, dead letters and job failures', () => {
    const alerts = alertExpressions();
    const about = (pattern: RegExp) => alerts.some((a) => pattern.test(a.expr));
    assert.ok(about(/supply_http_requests_total\{status=~"5\.\."\}/), 'error rate');
    assert.ok(about(/histogram_quantile\(0\.99, .*supply_http_request_duration_seconds_bucket/), 'p99 latency');
    assert.ok(about(/supply_bus_message_age_seconds_bucket/), 'queue age');
    assert.ok(about(/outcome="dead_lettered"/), 'dead letters');
    assert.ok(about(/supply_jobs_finished_total\{status="failed"\}/), 'job failures');
  });

  it('every dashboard and alert expression names a metric of /metrics, with labels that metric has', () => {
    const expressions = [...dashboardExpressions(), ...alertExpressions()];
    assert.ok(expressions.length >= 20, `${expressions.length} expressions`);
    const registry = sys.proc.deps.metrics.registry;
    for (const { where, expr } of expressions) {
      const names = [...expr.matchAll(METRIC)];
      assert.ok(names.length > 0, `${where} names no metric: ${expr}`);
      for (const [, name, selector] of names) {
        assert.ok(exported.has(name!), `${where}: ${name} is not exported`);
        const family = registry.getSingleMetric(name!.replace(/_(bucket|count|sum)$/, '')) as unknown as
          { labelNames?: string[] } | undefined;
        if (!family || !selector) continue;
        for (const [, label] of selector.matchAll(/([a-z_]+)\s*(?:=~|!=|!~|=)/g)) {
          assert.ok(SCRAPE_LABELS.has(label!) || family.labelNames?.includes(label!), `${where}: ${name} has no label ${label}`);
        }
      }
    }
  });

  it('the dashboard covers RED per route, gRPC, queues, jobs and credits', () => {
    const all = dashboardExpressions()
      .map((e) => e.expr)
      .join('\n');
    for (const family of [
      'supply_http_requests_total',
      'supply_http_request_duration_seconds_bucket',
      'supply_grpc_calls_total',
      'supply_bus_messages_total',
      'supply_jobs_finished_total',
      'supply_metering_credits_spent_total',
    ]) {
      assert.ok(all.includes(family), family);
    }
    assert.match(all, /by \(route, method\)/);
  });
});
