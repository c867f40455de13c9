import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SERVICE_NAMES, type ServiceModule } from '@supply/kit';
import { createApp } from './app';
import { createGuard } from './auth/guard';
import { PrincipalCache } from './auth/principal-cache';
import { GatewayIdempotency } from './http/idempotency';
import { createMetering } from './metering/index';
import { allRoutes } from './routes/index';
import { webPages } from './web/pages';

/** The HTTP gateway: auth, gates, shapes; calls the five services over gRPC. */
export const gatewayModule: ServiceModule = {
  name: 'gateway',
  dependencies: SERVICE_NAMES,
  async init({ config, logger, clients, bus, meter }) {
    const now = () => config.now();
    const principals = new PrincipalCache({ fetch: (token) => clients.tokens.authenticate({ token }) });
    const following = await principals.follow(await bus());
    const revoked = (tenant: string, tokenId: number) => principals.forgetToken(tenant, tokenId);
    const metering = await createMetering({ meter: await meter(), bus: await bus(), clients, logger, now });
    const routes = allRoutes(clients, { now, revoked }, config.cursorSecret);
    const app = createApp({
      logger,
      routes,
      guard: createGuard({ authenticate: principals.authenticate, now }),
      meter: metering.hook,
      refund: metering.refund,
      idempotency: new GatewayIdempotency(clients.workflows, logger),
      pages: webPages({ clients, logger, now, revoked }),
      bodyLimitKb: config.BODY_LIMIT_KB,
      jsonLimitKb: 2048,
      async readiness() {
        const entries = await Promise.all(SERVICE_NAMES.map(async (s) => [s, await clients.health(s)] as const));
        return Object.fromEntries(entries);
      },
    });
    let server: Server | undefined;
    return {
      async start() {
        server = createServer(app);
        server.keepAliveTimeout = 5_000;
        await new Promise<void>((resolve, reject) => {
          server!.once('error', reject);
          server!.listen(config.PORT, () => resolve());
        });
        logger.info({ port: (server.address() as AddressInfo).port }, 'HTTP gateway listening');
      },
      async stop() {
        await Promise.all(following.map((s) => s.close()));
        if (server) {
          const s = server;
          // Stop accepting, let in-flight requests finish, then cut whatever is left.
          const closed = new Promise<void>((resolve) => s.close(() => resolve()));
          s.closeIdleConnections();
          const timer = setTimeout(() => s.closeAllConnections(), config.SHUTDOWN_TIMEOUT_MS);
          await closed;
          clearTimeout(timer);
        }
        // After the last answer, so every usage record is handed to the bus before it closes.
        await metering.stop();
      },
      async health() {
        return { ready: server?.listening ?? false, checks: { http: server?.listening ?? false } };
      },
      httpPort: () => (server?.address() as AddressInfo | null)?.port,
    } as import('@supply/kit').RunningModule & { httpPort(): number | undefined };
  },
};
