import { openEmbeddedStore } from './embedded';
import { openMongoStore } from './mongo';
import type { Store, StoreOptions } from './store';

export type * from './store';

/** MongoDB (database `supply_${database}`) when `mongodbUrl` is set, else the embedded LMDB store in `${dataDir}/${database}`. */
export function openStore(options: StoreOptions): Promise<Store> {
  if (options.mongodbUrl) return openMongoStore({ url: options.mongodbUrl, database: options.database });
  return openEmbeddedStore({ dataDir: options.dataDir, database: options.database });
}
