// The shared store of a test file (D33): a fresh database of the test PostgreSQL, owned by a role
// that is no superuser (the rights a corpus node has), with every shared room's tables made as a
// node makes them at start; `client()` opens another node's connections to it. Dropped at the end.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import postgres from "postgres";
import { PG_MIGRATIONS } from "../../src/migrations";
import { openSharedDatabase } from "../../src/store/shared";
import { type VectorDatabase, vectorDatabase } from "./pg-vectors";

export interface SharedDatabase {
  /** The first node's connections, the schema applied. */
  sql: postgres.Sql;
  /** Another node's connections to the same database. */
  client(): postgres.Sql;
  database: VectorDatabase;
  drop(): Promise<void>;
}

export async function sharedDatabase(): Promise<SharedDatabase> {
  const database = await vectorDatabase();
  const sql = await openSharedDatabase(database.url, PG_MIGRATIONS);
  const clients: postgres.Sql[] = [sql];
  return {
    sql,
    database,
    client: () => {
      const another = postgres(database.url, { max: 4, onnotice: () => {} });
      clients.push(another);
      return another;
    },
    drop: async () => {
      await Promise.all(clients.map((c) => c.end()));
      await database.drop();
    },
  };
}

/**
 * One suite of a room's tests run against each of its stores (D33: one suite, two stores): `body`
 * declares the tests, reading the store `open` made for them once before they run.
 */
export function storeSuite<S extends { close(): Promise<void> }>(
  name: string,
  open: () => Promise<S>,
  body: (store: () => S) => void,
): void {
  describe(name, () => {
    let store: S;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(() => store.close());
    body(() => store);
  });
}

/** The failure of another room that undoes a deletion's transaction in erasedInDeletion. */
class AnotherRoomFailed extends Error {}

/**
 * A room's erase of a user inside a deletion's PostgreSQL transaction (D33): inside it, nothing of
 * the user is counted; when another room fails the whole is undone and `kept` rows are there again;
 * committed, none are. A failed check inside the transaction fails the test (not taken for the undo).
 */
export async function erasedInDeletion(
  sql: postgres.Sql,
  room: {
    erase(tx: postgres.TransactionSql): Promise<unknown>;
    rowsIn(tx: postgres.TransactionSql): Promise<number>;
    rows(): Promise<number>;
  },
  kept: number,
): Promise<void> {
  await sql
    .begin(async (tx) => {
      await room.erase(tx);
      expect(await room.rowsIn(tx)).toBe(0);
      throw new AnotherRoomFailed();
    })
    .catch((error: unknown) => {
      if (!(error instanceof AnotherRoomFailed)) throw error;
    });
  expect(await room.rows()).toBe(kept);
  await sql.begin((tx) => room.erase(tx));
  expect(await room.rows()).toBe(0);
}
