/** The operator CLI's commands, run against the tokens service of a running server. */
import { randomUUID } from 'node:crypto';
import { parseArgs, type ParseArgsConfig } from 'node:util';
// Narrow imports: the CLI needs config, clients and errors, not the store, bus and meter adapters.
import { ConfigError, createClients, isAppError, loadConfig, type CallOverrides, type Clients } from '@supply/kit';
import type { supply_tokens_v1 } from '@supply/contracts';

const USAGE = `Usage: npm run admin -- <command>

  tenant create <slug> [--name <name>] [--public-api on|off]   (default: on)
  tenant set <slug> [--name <name>] [--public-api on|off]
  tenant show <slug>
  user create <tenant> <email> --password <p> [--admin] [--level <module>=<level> ...]
  user set <tenant> <email> [--admin on|off] [--level <module>=<level> ...] [--password <p>]
  token create <tenant> <email> --name <n> --scopes <s1,s2> [--expires-at <iso>]
  token list <tenant> [--email <e>]
  token revoke <tenant> <id>
  limits set <tenant> [--rate <n>] [--window <seconds>] [--credits <n>]

Modules: public_api master_data demand inventory supply finance. Levels: planner view none.
Scopes: public_api.read public_api.write public_api.compute public_api.workflow public_api.workflow.replace *
Exit status: 0 done, 1 refused by the service, 2 bad usage or configuration, 3 service unreachable.
`;

class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Positionals (exactly `names`) and the given options of one command; anything else is a usage error. */
function parse<const N extends readonly string[]>(args: string[], names: N, options: Options = {}) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (parsed.positionals.length !== names.length) {
    throw new UsageError(`expected ${names.map((n) => `<${n}>`).join(' ')}`);
  }
  const positional = Object.fromEntries(names.map((n, i) => [n, parsed.positionals[i]!])) as Record<N[number], string>;
  return { positional, values: parsed.values as Record<string, string | boolean | string[] | undefined> };
}

function onOff(name: string, value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'on') return true;
  if (value === 'off') return false;
  throw new UsageError(`--${name} takes on or off`);
}

function positiveInt(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^[0-9]+$/.test(String(value)) || !Number.isSafeInteger(n) || n < 1) throw new UsageError(`--${name} takes a positive integer`);
  return n;
}

function levels(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (value as string[] | undefined) ?? []) {
    const [module, level, extra] = pair.split('=');
    if (!module || !level || extra !== undefined) throw new UsageError(`--level takes <module>=<level>, got ${pair}`);
    out[module] = level;
  }
  return out;
}

const describeTenant = (t: supply_tokens_v1.Tenant) =>
  `${t.slug} "${t.name}": Public API ${t.public_api_enabled ? 'on' : 'off'}; rate ${t.rate_limit} per ${t.rate_window_seconds} s; ${t.monthly_credits} credits a month`;
const describeUser = (u: supply_tokens_v1.User) =>
  `${u.email} in ${u.tenant}${u.is_admin ? ' (workspace admin)' : ''}: ${Object.entries(u.levels)
    .map(([m, l]) => `${m}=${l}`)
    .join(' ')}`;

function tokenTable(tokens: supply_tokens_v1.TokenInfo[], now: Date): string {
  const status = (t: supply_tokens_v1.TokenInfo) =>
    t.revoked_at ? 'revoked' : t.expires_at && Date.parse(t.expires_at) <= now.getTime() ? 'expired' : 'active';
  const rows = [
    ['ID', 'NAME', 'SCOPES', 'STATUS', 'EXPIRES', 'LAST USED', 'CREATOR'],
    ...tokens.map((t) => [
      String(t.id),
      t.name,
      t.scopes.join(','),
      status(t),
      t.expires_at || 'never',
      t.last_used_at || 'never',
      t.user_email,
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

async function run(args: string[], clients: Clients, now: () => Date, out: (line: string) => void): Promise<void> {
  const [noun, verb, ...rest] = args;
  const asTenant = (tenant: string): CallOverrides => ({ context: { requestId: `admin-cli-${randomUUID()}`, tenant } });
  const command = `${noun ?? ''} ${verb ?? ''}`;
  switch (command) {
    case 'tenant create': {
      const { positional, values } = parse(rest, ['slug'], { name: { type: 'string' }, 'public-api': { type: 'string' } });
      const tenant = await clients.tokens.createTenant({
        slug: positional.slug,
        name: (values.name as string | undefined) ?? '',
        public_api_enabled: onOff('public-api', values['public-api']) ?? true,
      });
      return out(`Created tenant ${describeTenant(tenant)}`);
    }
    case 'tenant set': {
      const { positional, values } = parse(rest, ['slug'], { name: { type: 'string' }, 'public-api': { type: 'string' } });
      const tenant = await clients.tokens.updateTenant({
        slug: positional.slug,
        name: values.name as string | undefined,
        public_api_enabled: onOff('public-api', values['public-api']),
      });
      return out(`Updated tenant ${describeTenant(tenant)}`);
    }
    case 'tenant show': {
      const { positional } = parse(rest, ['slug']);
      return out(describeTenant(await clients.tokens.getTenant({ slug: positional.slug })));
    }
    case 'user create': {
      const { positional, values } = parse(rest, ['tenant', 'email'], {
        password: { type: 'string' },
        admin: { type: 'boolean' },
        level: { type: 'string', multiple: true },
      });
      if (typeof values.password !== 'string') throw new UsageError('--password is required');
      const user = await clients.tokens.createUser(
        { email: positional.email, password: values.password, is_admin: values.admin === true, levels: levels(values.level) },
        asTenant(positional.tenant),
      );
      return out(`Created user ${describeUser(user)}`);
    }
    case 'user set': {
      const { positional, values } = parse(rest, ['tenant', 'email'], {
        admin: { type: 'string' },
        level: { type: 'string', multiple: true },
        password: { type: 'string' },
      });
      const user = await clients.tokens.updateUser(
        {
          email: positional.email,
          is_admin: onOff('admin', values.admin),
          levels: levels(values.level),
          password: values.password as string | undefined,
        },
        asTenant(positional.tenant),
      );
      return out(`Updated user ${describeUser(user)}`);
    }
    case 'token create': {
      const { positional, values } = parse(rest, ['tenant', 'email'], {
        name: { type: 'string' },
        scopes: { type: 'string' },
        'expires-at': { type: 'string' },
      });
      if (typeof values.name !== 'string') throw new UsageError('--name is required');
      if (typeof values.scopes !== 'string') throw new UsageError('--scopes is required');
      const created = await clients.tokens.createToken(
        {
          user_email: positional.email,
          name: values.name,
          scopes: values.scopes
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
          expires_at: (values['expires-at'] as string | undefined) ?? '',
        },
        asTenant(positional.tenant),
      );
      // Only the token on stdout, so `$(npm run -s admin -- token create ...)` captures it.
      return out(created.plain_text_token);
    }
    case 'token list': {
      const { positional, values } = parse(rest, ['tenant'], { email: { type: 'string' } });
      const tokens: supply_tokens_v1.TokenInfo[] = [];
      for (let page = 1; ; page++) {
        const batch = await clients.tokens.listTokens(
          { actor: { user_id: 0, operator: true }, user_email: (values.email as string | undefined) ?? '', page, per_page: 1000 },
          asTenant(positional.tenant),
        );
        tokens.push(...batch.tokens);
        if (batch.tokens.length === 0 || tokens.length >= batch.total) break;
      }
      return out(tokenTable(tokens, now()));
    }
    case 'token revoke': {
      const { positional } = parse(rest, ['tenant', 'id']);
      const id = positiveInt('id', positional.id)!;
      const token = await clients.tokens.revokeToken({ actor: { user_id: 0, operator: true }, id }, asTenant(positional.tenant));
      return out(`Revoked token ${token.id} "${token.name}" of ${token.user_email}`);
    }
    case 'limits set': {
      const { positional, values } = parse(rest, ['tenant'], {
        rate: { type: 'string' },
        window: { type: 'string' },
        credits: { type: 'string' },
      });
      const tenant = await clients.tokens.updateTenant({
        slug: positional.tenant,
        rate_limit: positiveInt('rate', values.rate),
        rate_window_seconds: positiveInt('window', values.window),
        monthly_credits: positiveInt('credits', values.credits),
      });
      return out(`Updated tenant ${describeTenant(tenant)}`);
    }
    default:
      throw new UsageError(noun ? `unknown command: ${command.trim()}` : 'no command given');
  }
}

export interface CliIo {
  stdout(line: string): void;
  stderr(line: string): void;
  /** The environment the configuration is read from (the server's). */
  env: Record<string, string | undefined>;
}

/** Runs one command; returns the exit status. */
export async function main(args: string[], io: CliIo): Promise<number> {
  if (args.length === 0 || args[0] === 'help' || args.includes('--help')) {
    io.stdout(USAGE);
    return args.length === 0 ? 2 : 0;
  }
  let config;
  try {
    config = loadConfig({ target: 'all' }, io.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr(err.message);
      return 2;
    }
    throw err;
  }
  const clients = createClients(config);
  try {
    await run(args, clients, () => config.now(), io.stdout);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`error: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (isAppError(err)) {
      if (err.code === 'unavailable' || err.code === 'deadline_exceeded') {
        io.stderr(
          `error: the tokens service at ${config.peers.tokens} is not reachable (${err.message}). Is the server running with the same environment (DATA_DIR, GRPC_BASE_PORT or TOKENS_ADDR)?`,
        );
        return 3;
      }
      if (err.code === 'unauthenticated' && err.details.grpcStatus !== undefined) {
        io.stderr(`error: the tokens service refused this CLI's service credential. Use the server's SERVICE_CREDENTIAL or DATA_DIR.`);
        return 2;
      }
      io.stderr(`error: ${err.message}`);
      for (const [field, messages] of Object.entries((err.details.fields as Record<string, string[]> | undefined) ?? {})) {
        io.stderr(`  ${field}: ${messages.join(' ')}`);
      }
      return 1;
    }
    io.stderr(`error: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    clients.close();
  }
}
