import { createServer, type Server, type ServerResponse } from 'node:http';
import { Server as NetServer, type AddressInfo } from 'node:net';
import { SERVICE_NAMES, type ServiceModule } from '@supply/kit';
import { createApp } from './app';
import { createGuard } from './auth/guard';
import { PrincipalCache } from './auth/principal-cache';
import { answerClientErrors } from './http/client-errors';
import { GatewayIdempotency } from './http/idempotency';
import { ReferenceCache } from './http/reference-cache';
import { createMetering } from './metering/index';
import { allRoutes } from './routes/index';
import { webPages } from './web/pages';

/** The HTTP gateway: auth, gates, shapes; calls the five services over gRPC. */
export const gatewayModule: ServiceModule = {
  name: 'gateway',
  dependencies: SERVICE_NAMES,
  async init({ config, logger, clients, bus, meter, metrics, stopping }) {
    const now = () => config.now();
    const reachable = (ping: () => Promise<void>) =>
      ping().then(
        () => true,
        () => false,
      );
    const peerHealth = async () =>
      Object.fromEntries(await Promise.all(SERVICE_NAMES.map(async (s) => [s, await clients.health(s)] as const)));
    // All-in-one runs the five services in this process, so they are its own to serve; apart, they are peers.
    const servicesInProcess = config.target === 'all';
    const principals = new PrincipalCache({ fetch: (token) => clients.tokens.authenticate({ token }) });
    const following = await principals.follow(await bus(), logger);
    const revoked = (tenant: string, tokenId: number) => principals.forgetToken(tenant, tokenId);
    const metering = await createMetering({ meter: await meter(), bus: await bus(), clients, logger, now });
    const referenceCache =
      config.REFERENCE_CACHE === 'on'
        ? new ReferenceCache({ maxBytes: config.REFERENCE_CACHE_MAX_BYTES, ttlMs: config.REFERENCE_CACHE_TTL_MS })
        : undefined;
    if (referenceCache) following.push(await referenceCache.follow(await bus(), logger));
    const routes = allRoutes(clients, { now, revoked }, config.cursorSecret, referenceCache);
    const app = createApp({
      logger,
      metrics,
      routes,
      guard: createGuard({ authenticate: principals.authenticate, now }),
      meter: metering.hook,
      refund: metering.refund,
      idempotency: new GatewayIdempotency(clients.workflows, logger),
      pages: webPages({ clients, logger, now, revoked }),
      bodyLimitKb: config.BODY_LIMIT_KB,
      cors: { origins: config.CORS_ORIGINS ?? [], maxAgeSeconds: config.CORS_MAX_AGE_SECONDS },
      compressionThresholdBytes: config.COMPRESSION_THRESHOLD_BYTES,
      legacyUpstream: config.LEGACY_UPSTREAM_URL
        ? { url: config.LEGACY_UPSTREAM_URL, timeoutMs: config.LEGACY_UPSTREAM_TIMEOUT_MS }
        : undefined,
      jsonLimitKb: 2048,
      async readiness(): Promise<Record<string, boolean>> {
        if (stopping.aborted) return { accepting: false };
        const [b, m] = await Promise.all([bus(), meter()]);
        const [busOk, meterOk, services] = await Promise.all([
          reachable(() => b.ping()),
          reachable(() => m.ping()),
          servicesInProcess ? peerHealth() : {},
        ]);
        return { bus: busOk, meter: meterOk, ...services };
      },
      peers: servicesInProcess ? undefined : peerHealth,
    });
    let server: Server | undefined;
    // Responses not yet finished, so a drain can still mark them `Connection: close`.
    const open = new Set<ServerResponse>();
    let draining = false;
    let drained: Promise<void> | undefined;
    // Stop accepting and let in-flight requests finish. A client busy on a keep-alive connection gets
    // `Connection: close` on its next answer; closing its socket between two requests would reset the
    // second, so idle sockets are closed only after a short grace, then as they go idle, and whatever
    // is left at the deadline is cut.
    const drain = (deadline: number) =>
      (drained ??= (async () => {
        if (!server) return;
        const s = server;
        draining = true;
        for (const res of open) if (!res.headersSent) res.setHeader('Connection', 'close');
        // net.Server's close: http.Server's own closes idle sockets at once, which is that reset.
        const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(s, () => resolve()));
        const graceMs = Math.min(1_000, Math.floor(config.SHUTDOWN_TIMEOUT_MS / 10));
        let sweep: NodeJS.Timeout | undefined;
        const grace = setTimeout(() => {
          s.closeIdleConnections();
          sweep = setInterval(() => s.closeIdleConnections(), 50);
        }, graceMs);
        const timer = setTimeout(() => s.closeAllConnections(), Math.max(0, deadline - Date.now()));
        await closed;
        clearTimeout(grace);
        clearInterval(sweep);
        clearTimeout(timer);
      })());
    // The drain starts the moment shutdown begins, not when the runner reaches this module.
    stopping.addEventListener('abort', () => void drain(Date.now() + Math.floor(config.SHUTDOWN_TIMEOUT_MS / 2)), { once: true });
    return {
      async start() {
        server = createServer((req, res) => {
          // While draining, every answer closes its connection, so a busy keep-alive client lets go too.
          if (draining) res.setHeader('Connection', 'close');
          open.add(res);
          res.once('close', () => open.delete(res));
          app(req, res);
        });
        server.keepAliveTimeout = 5_000;
        answerClientErrors(server);
        await new Promise<void>((resolve, reject) => {
          server!.once('error', reject);
          server!.listen(config.PORT, () => resolve());
        });
        logger.info({ port: (server.address() as AddressInfo).port }, 'HTTP gateway listening');
      },
      async stop(deadline = Date.now() + config.SHUTDOWN_TIMEOUT_MS) {
        await drain(deadline);
        // Revocations stay followed until the last request is answered.
        await Promise.all(following.map((s) => s.close()));
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
