import { Metadata } from '@grpc/grpc-js';
import type { PrincipalContext, RequestContext } from '../context';

/** Metadata keys every internal call carries. */
export const MD = {
  credential: 'x-service-credential',
  requestId: 'x-request-id',
  tenant: 'x-tenant',
  principal: 'x-principal',
} as const;

export function contextToMetadata(credential: string, ctx: RequestContext | undefined): Metadata {
  const md = new Metadata();
  md.set(MD.credential, credential);
  if (ctx?.requestId) md.set(MD.requestId, ctx.requestId);
  if (ctx?.tenant) md.set(MD.tenant, ctx.tenant);
  if (ctx?.principal) md.set(MD.principal, JSON.stringify(ctx.principal));
  return md;
}

/** `requestIdFallback` names a call that came without a request id; a function is called only then. */
export function metadataToContext(md: Metadata, requestIdFallback: string | (() => string)): RequestContext {
  const first = (key: string) => {
    const v = md.get(key)[0];
    return v === undefined ? undefined : String(v);
  };
  let principal: PrincipalContext | undefined;
  const rawPrincipal = first(MD.principal);
  if (rawPrincipal) {
    try {
      principal = JSON.parse(rawPrincipal) as PrincipalContext;
    } catch {
      principal = undefined;
    }
  }
  const requestId = first(MD.requestId) ?? (typeof requestIdFallback === 'string' ? requestIdFallback : requestIdFallback());
  return { requestId, tenant: first(MD.tenant), principal };
}
