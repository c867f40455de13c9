import { AsyncLocalStorage } from 'node:async_hooks';

/** Who a call acts for: the token's tenant and its creator, as the gateway established them. */
export interface PrincipalContext {
  tenant: string;
  tokenId: number;
  userId: number;
  scopes: string[];
  isAdmin: boolean;
}

export interface RequestContext {
  requestId: string;
  tenant?: string;
  principal?: PrincipalContext;
  /** The tenant of the request that caused this work (a bus delivery): logged, never acted for. */
  originTenant?: string;
  /** Epoch ms after which work for this call is pointless. */
  deadline?: number;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function runWithContext<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}
