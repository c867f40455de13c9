import type { ReferenceCache } from './reference-cache';
import { envelope, type RouteDef } from './routes';

/**
 * Puts a reference route behind the cache. A GET is answered from the cache (or fills it with a
 * plain 200 envelope), with an entity tag so a matching If-None-Match is a 304 without a body;
 * auth, gates, validation and metering have already run (they are before the handler). A write
 * drops the tenant's answers here at once; other gateways hear it from the reference service,
 * which answers a write only once its broadcast has reached every gateway.
 */
export function withReferenceCache(route: RouteDef, cache: ReferenceCache): RouteDef {
  const inner = route.handler;
  if (route.method !== 'get') {
    return {
      ...route,
      async handler(input) {
        try {
          return await inner(input);
        } finally {
          cache.forgetTenant(input.params.tenant!);
        }
      },
    };
  }
  return {
    ...route,
    async handler(input) {
      const { req, res } = input;
      const tenant = input.params.tenant!;
      const url = req.originalUrl;
      let answer = cache.get(tenant, url);
      if (answer === undefined) {
        const generation = cache.generation(tenant);
        const reply = await inner(input);
        if (reply.kind !== 'envelope' || (reply.status ?? 200) !== 200 || reply.headers !== undefined) return reply;
        const body = JSON.stringify(envelope(req, reply));
        // Express's own entity tag function, so cached and uncached answers carry the same tag.
        const etag = (req.app.get('etag fn') as (body: string, encoding: string) => string)(body, 'utf8');
        answer = { body, etag };
        cache.set(tenant, url, generation, answer);
      }
      res.setHeader('ETag', answer.etag);
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      // res.send answers 304 without a body when If-None-Match matches the tag (req.fresh).
      res.status(200).send(answer.body);
      return { kind: 'sent' };
    },
  };
}
