// Operator CLI: `npm run admin -- <command>`. Reaches the running tokens service over gRPC
// with the server's own environment (in all-in-one mode the credential is under DATA_DIR).
import { main } from './commands';

process.exitCode = await main(process.argv.slice(2), {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
});
