import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('./cli.ts', import.meta.url));
const repoRoot = path.resolve(path.dirname(cli), '../../../..');

function runCli(args: string[], input?: string) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    input,
    timeout: 20_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('forecast/cli', function () {
  this.timeout(30_000);
  let dir: string;

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'forecast-cli-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('forecasts every series of a long CSV onto the frequency grid', () => {
    const seasonal = [4, 8, 12, 8];
    const rows = ['ds,y,unique_id'];
    for (let t = 23; t >= 0; t--) {
      const month = String((t % 12) + 1).padStart(2, '0');
      rows.push(`${2022 + Math.floor(t / 12)}-${month}-01,${seasonal[t % 4]},"store 1, sku 9"`);
    }
    rows.push('2024-06-01,7,flat', '2024-04-01,7,flat', '2024-05-01,,flat');
    const input = path.join(dir, 'history.csv');
    const output = path.join(dir, 'forecasts.csv');
    writeFileSync(input, `${rows.join('\n')}\n`);
    const result = runCli(['--input', input, '--horizon', '4', '--freq', 'month', '--missing-imputation', 'linear', '--output', output]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr.includes('series'), false, 'no progress bar when stderr is not a terminal');
    const lines = readFileSync(output, 'utf8').trim().split('\n');
    assert.equal(lines[0], 'unique_id,ds,yhat,model,lo80,hi80,lo95,hi95');
    assert.deepEqual(
      lines.slice(1, 5).map((l) => l.split(',').slice(0, 3)),
      [
        ['flat', '2024-07-01', '7'],
        ['flat', '2024-08-01', '7'],
        ['flat', '2024-09-01', '7'],
        ['flat', '2024-10-01', '7'],
      ],
    );
    const seasonalRows = lines.slice(5).map((l) => l.replace('"store 1, sku 9",', '').split(','));
    assert.deepEqual(
      seasonalRows.map((r) => [r[0], r[1]]),
      [
        ['2024-01-01', '4'],
        ['2024-02-01', '8'],
        ['2024-03-01', '12'],
        ['2024-04-01', '8'],
      ],
    );
    assert.equal(readdirSync(dir).filter((f) => f.includes('partial')).length, 0);
    const summary = readFileSync(path.join(dir, 'forecasts.summary.csv'), 'utf8').trim().split('\n');
    assert.equal(summary[0], 'unique_id,model,series_class,mase,rmsse,bias,parameters');
    assert.deepEqual(
      summary.slice(1).map((l) => l.split(',')[0]),
      ['flat', '"store 1'],
      'one summary row per series, sorted by id',
    );
    assert.match(summary[1], /^flat,naive,smooth,/);
  });

  it('writes 80% and 95% intervals that contain the forecast and are never negative', () => {
    const rows = ['unique_id,ds,y'];
    for (let t = 0; t < 36; t++)
      rows.push(`s,${2021 + Math.floor(t / 12)}-${String((t % 12) + 1).padStart(2, '0')}-01,${t % 3 === 0 ? 9 : t % 5}`);
    const result = runCli(
      ['--input', '-', '--horizon', '6', '--freq', 'month', '--output', '-', '--summary', path.join(dir, 's.csv')],
      `${rows.join('\n')}\n`,
    );
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trim().split('\n').slice(1);
    assert.equal(lines.length, 6);
    for (const line of lines) {
      const [yhat, lo80, hi80, lo95, hi95] = [2, 4, 5, 6, 7].map((k) => Number(line.split(',')[k]));
      assert.ok(lo95 >= 0 && lo95 <= lo80 && lo80 <= yhat && yhat <= hi80 && hi80 <= hi95, line);
      assert.ok(hi95 > lo95, `a noisy series has a spread: ${line}`);
    }
    assert.match(
      readFileSync(path.join(dir, 's.csv'), 'utf8'),
      /^unique_id,model,series_class,mase,rmsse,bias,parameters\ns,[a-z_]+,\w+,[\d.]+,[\d.]+,-?[\d.]+,/,
    );
  });

  it('reads stdin and writes stdout with a forced algorithm', () => {
    const csv = 'unique_id,ds,y\nx,2024-01-01,0\nx,2024-01-02,3\nx,2024-01-04,0\nx,2024-01-05,3\n';
    const result = runCli(
      ['--input', '-', '--horizon', '2', '--freq', 'day', '--algorithm', 'croston', '--constraint', 'none', '--output', '-'],
      csv,
    );
    assert.equal(result.code, 0, result.stderr);
    // the unrecorded 2024-01-03 counts as no sale: sizes 3, 3; intervals 2 -> 2.1
    assert.deepEqual(
      result.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(',').slice(0, 4).join(',')),
      ['x,2024-01-06,1.428571,croston', 'x,2024-01-07,1.428571,croston'],
    );
  });

  it('keeps a signed series signed by default, and clips a series of quantities at zero', () => {
    // A log level falling by 0.5 a year, and a quantity falling by 5: straight lines to extend.
    const rows = ['unique_id,ds,y'];
    for (let t = 0; t < 12; t++) rows.push(`log,${2000 + t}-01-01,${(-1 - 0.5 * t).toFixed(2)}`, `qty,${2000 + t}-01-01,${60 - 5 * t}`);
    const result = runCli(
      ['--input', '-', '--horizon', '4', '--freq', 'year', '--algorithm', 'holt', '--output', '-'],
      `${rows.join('\n')}\n`,
    );
    assert.equal(result.code, 0, result.stderr);
    const yhat = (id: string) =>
      result.stdout
        .trim()
        .split('\n')
        .filter((l) => l.startsWith(`${id},`))
        .map((l) => Number(l.split(',')[2]));
    assert.deepEqual(
      yhat('log').map((v) => Number(v.toFixed(2))),
      [-7, -7.5, -8, -8.5],
      'a history below zero is forecast as fitted',
    );
    assert.deepEqual(yhat('qty'), [0, 0, 0, 0], 'expected demand is never below zero');
  });

  it('names the line of a malformed row and exits non-zero without leaving output', () => {
    const input = path.join(dir, 'bad.csv');
    const output = path.join(dir, 'bad-out.csv');
    writeFileSync(input, 'unique_id,ds,y\na,2024-01-01,1\na,2024-01-02,abc\n');
    const result = runCli(['--input', input, '--horizon', '2', '--freq', 'day', '--output', output]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /line 3: invalid number "abc" in column y/);
    assert.throws(() => readFileSync(output));
    writeFileSync(input, 'id,date,value\n');
    assert.match(runCli(['--input', input, '--horizon', '2', '--freq', 'day', '--output', output]).stderr, /line 1: header/);
    writeFileSync(input, 'unique_id,ds,y\na,01/02/2024,1\n');
    assert.match(runCli(['--input', input, '--horizon', '2', '--freq', 'day', '--output', output]).stderr, /line 2: invalid date/);
  });

  it('rejects bad arguments with usage and exit code 2', () => {
    const both = runCli(['--input', '-', '--horizon', '2', '--freq', 'day', '--output', '-', '--summary', '-']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--summary and --output cannot both be stdout/);
    const bad = [
      ['--horizon', '3', '--freq', 'month', '--output', '-'],
      ['--input', 'x.csv', '--horizon', '0', '--freq', 'month', '--output', '-'],
      ['--input', 'x.csv', '--horizon', '3', '--freq', 'hour', '--output', '-'],
      ['--input', 'x.csv', '--horizon', '3', '--freq', 'day', '--algorithm', 'prophet', '--output', '-'],
      ['--input', 'x.csv', '--horizon', '3', '--freq', 'day', '--output', '-', '--unknown'],
    ];
    for (const args of bad) {
      const result = runCli(args);
      assert.equal(result.code, 2, args.join(' '));
      assert.match(result.stderr, /usage: forecast/);
    }
  });
});
