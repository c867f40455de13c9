// Runs the ```sh blocks of a Markdown section with bash, so documented commands are tested as written.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';

/** The ```sh blocks between `heading` (a whole line) and the next heading of the same or a higher level. */
export function shBlocks(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `no "${heading}" section`);
  const level = heading.match(/^#+/)![0].length;
  const lines = markdown.slice(start + heading.length + 2).split('\n');
  const next = new RegExp(`^#{1,${level}} `);
  const blocks: string[] = [];
  let block: string[] | undefined;
  let fenced = false;
  for (const line of lines) {
    if (line.startsWith('```')) {
      if (!fenced && line === '```sh') block = [];
      else if (fenced && block) {
        blocks.push(`${block.join('\n')}\n`);
        block = undefined;
      }
      fenced = !fenced;
    } else if (fenced) block?.push(line);
    else if (next.test(line)) break;
  }
  return blocks;
}

export interface BlocksRun {
  code: number | null;
  /** stdout of each block, by index. */
  out: string[];
  stderr: string;
}

const MARK = '@@doc-block ';

/** Every block in one bash (variables carry over), each announced by a marker; stops at the first failing command. */
export function runShBlocks(blocks: string[], opts: { cwd: string; env: Record<string, string>; prelude?: string }): Promise<BlocksRun> {
  const script = ['set -eo pipefail', opts.prelude ?? '', ...blocks.flatMap((b, i) => [`echo '${MARK}${i}'`, b])].join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    child.on('error', reject);
    child.on('exit', (code) => {
      const out: string[] = [];
      for (const part of stdout.split(MARK).slice(1)) {
        const nl = part.indexOf('\n');
        out[Number(part.slice(0, nl))] = part.slice(nl + 1);
      }
      resolve({ code, out, stderr });
    });
  });
}

/** What to print when a run fails: its exit status, stderr and each block's output. */
export function describeRun(run: BlocksRun): string {
  return `exit ${run.code}; stderr:\n${run.stderr}\nstdout per block:\n${run.out.map((o, i) => `[${i}] ${o}`).join('\n')}`;
}
