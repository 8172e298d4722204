// The guard's reads of the shared PostgreSQL per request (D33): the token's revocation and the
// user's wrapped data key in one statement, one round trip, for a token seen before and for a
// new one. Counted as PostgreSQL is sent them (postgres.js's debug hook on the node's connections).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { NOT_BEFORE_TABLE, type PostgresAuthStore, REVOKED_TABLE } from "../../src/auth/store-postgres";
import { USER_KEYS_TABLE } from "../../src/crypto/user-keys-postgres";
import { newMasterKey } from "../backup/support";
import { bearer, req, tempDir, testApp } from "../helpers";
import { type SharedDatabase, sharedDatabase } from "../support/shared-database";

setDefaultTimeout(120_000);

let db: SharedDatabase;
let t: Awaited<ReturnType<typeof testApp>>;
beforeAll(async () => {
  db = await sharedDatabase();
  t = await testApp({ CORPUS_DATABASE_URL: db.database.url, CORPUS_MASTER_KEY: newMasterKey(), CORPUS_DATA_DIR: join(tempDir(), "data") });
});
afterAll(async () => {
  await t?.services.close();
  await db?.drop();
});

/** The statements a request sent that read the token's revocation or the user's key. */
async function guardStatements(token: string): Promise<string[]> {
  const sent: string[] = [];
  const options = t.services.shared!.options as { debug?: unknown };
  options.debug = (_connection: number, statement: string) => {
    if ([REVOKED_TABLE, NOT_BEFORE_TABLE, USER_KEYS_TABLE].some((table) => statement.includes(table))) sent.push(statement);
  };
  try {
    const r = await t.app.handle(req("/v1/connectors", { headers: bearer(token) }));
    expect(r.status).toBe(200);
  } finally {
    options.debug = false;
  }
  return sent;
}

test("a guarded request reads its token's revocation and its user's key in one statement, new token or seen before", async () => {
  const { token } = await t.services.auth.issuer.issue("rosa", ["connectors:read"]);
  // New: the key is made (its insert and read back are the first request's alone), then one statement a request.
  await guardStatements(token);
  expect((await guardStatements(token)).length).toBe(1);
  const { token: fresh } = await t.services.auth.issuer.issue("rosa", ["connectors:read"]);
  expect((await guardStatements(fresh)).length).toBe(1);
});

test("the one statement still refuses a token revoked on another node", async () => {
  const { token } = await t.services.auth.issuer.issue("sami", ["connectors:read"]);
  await guardStatements(token);
  // Revoked on another node (its own connections), as a deletion there stamps it.
  const store = t.services.auth.store as PostgresAuthStore;
  await db.client().begin((tx) => store.within(tx).revokeUser("sami", Date.now() + 1000));
  const r = await t.app.handle(req("/v1/connectors", { headers: bearer(token) }));
  expect(r.status).toBe(401);
});
