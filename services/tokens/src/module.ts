import { adaptService, AppError, type ServiceModule } from '@supply/kit';
import { RECORDS_USAGE_QUEUE, supply_tokens_v1, USAGE_QUEUE } from '@supply/contracts';
import { busEvents } from './broadcasts';
import { exchangeCredentials } from './legacy/exchange';
import { openIdentityStore } from './repository';
import { seedDemoIdentity } from './seed/demo';
import { getSession, login, logout } from './sessions/service';
import { createTenant, requireTenant, tenantView, updateTenant } from './tenants/service';
import { authenticate } from './tokens/authenticate';
import { createToken, provisionToken } from './tokens/create';
import { listTokens, revokeToken } from './tokens/manage';
import { UsageLedger } from './usage/ledger';
import { openUsageStore } from './usage/repository';
import { getCredits, getUsage, resetCreditBalance, startUsageFolding, type UsageDeps } from './usage/service';
import { createUser, requireUser, updateUser } from './users/service';

/** Tokens service: tenants, users, module levels, API tokens and page sessions (its own database `tokens`). */
export const tokensModule: ServiceModule = {
  name: 'tokens',
  dependencies: [],
  workQueues: [USAGE_QUEUE, RECORDS_USAGE_QUEUE],
  async init({ config, logger, openStore, bus, meter, metrics }) {
    const store = await openStore('tokens');
    const identity = await openIdentityStore(store);
    const [messages, attempts] = await Promise.all([bus(), meter()]);
    const broadcasts = await busEvents(messages, logger, metrics);
    const events = broadcasts.events;
    const now = () => config.now();
    const usage: UsageDeps = { identity, ledger: new UsageLedger(await openUsageStore(store)), meter: attempts, now };
    let stopFolding: (() => Promise<void>) | undefined;
    if (config.seedDemo && (await seedDemoIdentity(identity, config.DEMO_PASSWORD, now()))) {
      logger.info('demo identities created');
    }
    const implementation = adaptService(
      supply_tokens_v1.TokenServiceService,
      {
        getTenant: async ({ slug }) => tenantView(await requireTenant(identity, slug)),
        createTenant: (request) => createTenant(identity, request, now()),
        async updateTenant(request) {
          const tenant = await updateTenant(identity, events, request);
          if (request.monthly_credits !== undefined) await resetCreditBalance(usage, request.slug);
          return tenant;
        },

        createUser: (request, ctx) => createUser(identity, ctx.requireTenant(), request, now()),
        updateUser: (request, ctx) => updateUser(identity, events, ctx.requireTenant(), request, now()),

        async authenticate({ token }) {
          if (token.length > 512) throw new AppError('unauthenticated', 'Unauthenticated.');
          return authenticate(identity, token, now());
        },
        async createToken(request, ctx) {
          const user = await requireUser(identity, ctx.requireTenant(), request.user_email);
          return createToken(identity, user, request, now());
        },
        provisionToken: (request, ctx) => provisionToken(identity, ctx.requireTenant(), request, now()),
        listTokens: (request, ctx) => listTokens(identity, ctx.requireTenant(), request),
        revokeToken: (request, ctx) => revokeToken(identity, events, ctx.requireTenant(), request, now()),
        exchangeCredentials: (request, ctx) => exchangeCredentials(identity, attempts, ctx.requireTenant(), request, now()),

        login: (request, ctx) => login(identity, attempts, ctx.requireTenant(), request, now()),
        getSession: (request, ctx) => getSession(identity, ctx.requireTenant(), request, now()),
        async logout(request) {
          await logout(identity, request);
          return {};
        },

        getCredits: (request, ctx) => getCredits(usage, ctx.requireTenant(), request),
        getUsage: (request, ctx) => getUsage(usage, ctx.requireTenant(), request),
      },
      { credential: config.serviceCredential, logger },
    );
    return {
      grpc: { definition: supply_tokens_v1.TokenServiceService, implementation, protoFile: 'supply/tokens/v1/tokens.proto' },
      async start() {
        stopFolding = await startUsageFolding({ ...usage, bus: messages, logger });
      },
      async stop() {
        await stopFolding?.();
        await broadcasts.close();
      },
      // Ready only with both its own database and the broker: identity broadcasts and usage folding travel the bus.
      async health() {
        const [storeOk, busOk] = await Promise.all([
          store.ping().then(
            () => true,
            () => false,
          ),
          messages.ping().then(
            () => true,
            () => false,
          ),
        ]);
        return { ready: storeOk && busOk, checks: { store: storeOk, bus: busOk } };
      },
    };
  },
};
