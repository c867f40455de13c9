import { adaptService, AppError, NotFoundError, type ServiceModule } from '@supply/kit';
import { supply_tokens_v1 } from '@supply/protos';
import { openIdentityStore } from './repository';
import { authenticate } from './tokens/authenticate';
import { seedDemoIdentity } from './seed/demo';
import { createToken } from './tokens/create';

/** Tokens service: tenants, users, module levels and API tokens (its own database `tokens`). */
export const tokensModule: ServiceModule = {
  name: 'tokens',
  dependencies: [],
  async init({ config, logger, openStore }) {
    const store = await openStore('tokens');
    const identity = await openIdentityStore(store);
    if (config.seedDemo && (await seedDemoIdentity(identity, config.DEMO_PASSWORD))) {
      logger.info('demo identities created');
    }
    const implementation = adaptService(
      supply_tokens_v1.TokenServiceService,
      {
        async getTenant({ slug }) {
          const tenant = await identity.tenants.findById(slug);
          if (!tenant) throw new NotFoundError(`No tenant ${slug}.`);
          return {
            slug: tenant._id,
            name: tenant.name,
            public_api_enabled: tenant.public_api_enabled,
            rate_limit: tenant.rate_limit,
            rate_window_seconds: tenant.rate_window_seconds,
            monthly_credits: tenant.monthly_credits,
          };
        },
        async authenticate({ token }) {
          if (token.length > 512) throw new AppError('unauthenticated', 'Unauthenticated.');
          return authenticate(identity, token);
        },
        async createToken(request, ctx) {
          const tenant = ctx.requireTenant();
          const user = await identity.users.findOne({ tenant, email: request.user_email.toLowerCase() });
          if (!user) throw new NotFoundError(`No user ${request.user_email} in ${tenant}.`);
          return createToken(identity, user, request);
        },
      },
      { credential: config.serviceCredential, logger },
    );
    return {
      grpc: { definition: supply_tokens_v1.TokenServiceService, implementation, protoFile: 'supply/tokens/v1/tokens.proto' },
      async stop() {},
      async health() {
        const ok = await store.ping().then(() => true, () => false);
        return { ready: ok, checks: { store: ok } };
      },
    };
  },
};
