import { openEmbeddedStore } from './embedded';
import { openMongoStore } from './mongo';
import type { Store, StoreOptions } from './store';
import { tracedStore } from './traced';

export type * from './store';

/** MongoDB (database `${databasePrefix ?? 'supply'}_${database}`) when `mongodbUrl` is set, else the embedded LMDB store in `${dataDir}/${database}`; either traces its operations when tracing is on. */
export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.mongodbUrl)
    return tracedStore(
      await openMongoStore({ url: options.mongodbUrl, database: options.database, prefix: options.databasePrefix }),
      options.database,
      'mongodb',
    );
  return tracedStore(await openEmbeddedStore({ dataDir: options.dataDir, database: options.database }), options.database, 'lmdb');
}
