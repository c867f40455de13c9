// Operations CLI: `npm run ops -- <command>` (see commands.ts).
import { ALL_MODULES } from '../modules';
import { main } from './commands';

process.exitCode = await main(
  process.argv.slice(2),
  {
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
  },
  ALL_MODULES,
);
