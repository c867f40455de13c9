import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { openApiDocument } from '@supply/gateway';

/** Writes the gateway's OpenAPI document (no server needed) to the path given, for the linter and the client generator. */
const target = resolve(process.argv[2] ?? 'build/openapi.json');
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
console.log(`openapi: ${target}`);
