/** Every entity a load can sync, by the name requests use for it. A new entity is one file beside this one and a line here. */
import { INVENTORY } from './inventory';
import { SALES } from './sales';

export const SPECS = { sales: SALES, inventory: INVENTORY };

export type Entity = keyof typeof SPECS;
export const ENTITIES = Object.keys(SPECS) as Entity[];

export { INVENTORY, SALES };
export type { ApplyFlags, EntitySpec, PositionedRow, ResolveContext, ResolvedRow, TxRow } from './spec';
