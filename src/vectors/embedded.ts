// The embedded store of a database's connector vectors (the local index's), one per connection:
// every index of the database, and the search worker on its own connection, reach their vectors
// through it, never through the table.
import type { Database } from "bun:sqlite";
import { CONNECTOR_VECTORS, SqliteVectorStore } from "./sqlite";
import type { EmbeddedVectorStore } from "./store";

const stores = new WeakMap<Database, EmbeddedVectorStore>();

/** The connector vectors of `db`: sqlite-vec's table in it. */
export function connectorVectors(db: Database): EmbeddedVectorStore {
  let store = stores.get(db);
  if (!store) stores.set(db, (store = new SqliteVectorStore(db, CONNECTOR_VECTORS)));
  return store;
}
