// The embedded store of a database's connector vectors (the local index's), one per connection:
// every index of the database, and the search worker on its own connection, reach their vectors
// through it, never through the table. sqlite-vec's table, with an HNSW index beside the database
// for each partition past a threshold (partition-index.ts).
import type { Database } from "bun:sqlite";
import { PartitionIndexedStore, type PartitionIndexOptions } from "./partition-index";
import { CONNECTOR_VECTORS, SqliteVectorStore } from "./sqlite";

const stores = new WeakMap<Database, PartitionIndexedStore>();

/** The connector vectors of `db`. */
export function connectorVectors(db: Database): PartitionIndexedStore {
  let store = stores.get(db);
  if (!store) stores.set(db, (store = new PartitionIndexedStore(db, new SqliteVectorStore(db, CONNECTOR_VECTORS))));
  return store;
}

/** The connector vectors of `db` with these options (the service's configuration), before any use of them. */
export function configureConnectorVectors(db: Database, options: PartitionIndexOptions): PartitionIndexedStore {
  const store = new PartitionIndexedStore(db, new SqliteVectorStore(db, CONNECTOR_VECTORS), options);
  stores.set(db, store);
  return store;
}
