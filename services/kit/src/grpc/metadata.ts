import { Metadata } from '@grpc/grpc-js';
import type { PrincipalContext, RequestContext } from '../context';

/** Metadata keys every internal call carries. */
export const MD = {
  credential: 'x-service-credential',
  requestId: 'x-request-id',
  tenant: 'x-tenant',
  principal: 'x-principal',
} as const;

/** The JSON of a principal, kept while the object lives: the gateway hands the same object to every call of a cached token. */
const principalJson = new WeakMap<PrincipalContext, string>();

export function contextToMetadata(credential: string, ctx: RequestContext | undefined): Metadata {
  const md = new Metadata();
  md.set(MD.credential, credential);
  if (ctx?.requestId) md.set(MD.requestId, ctx.requestId);
  if (ctx?.tenant) md.set(MD.tenant, ctx.tenant);
  if (ctx?.principal) {
    let json = principalJson.get(ctx.principal);
    if (json === undefined) principalJson.set(ctx.principal, (json = JSON.stringify(ctx.principal)));
    md.set(MD.principal, json);
  }
  return md;
}

function firstValue(md: Metadata, key: string): string | undefined {
  const v = md.get(key)[0];
  return v === undefined ? undefined : String(v);
}

/** `requestIdFallback` names a call that came without a request id; a function is called only then. */
export function metadataToContext(md: Metadata, requestIdFallback: string | (() => string)): RequestContext {
  let principal: PrincipalContext | undefined;
  const rawPrincipal = firstValue(md, MD.principal);
  if (rawPrincipal) {
    try {
      principal = JSON.parse(rawPrincipal) as PrincipalContext;
    } catch {
      principal = undefined;
    }
  }
  const requestId = firstValue(md, MD.requestId) ?? (typeof requestIdFallback === 'string' ? requestIdFallback : requestIdFallback());
  return { requestId, tenant: firstValue(md, MD.tenant), principal };
}
