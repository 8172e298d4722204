// The token signing key on a shared PostgreSQL (D4, D33): one key for every node, kept in the
// shared database with its private half sealed by the master key every node holds, so a token
// minted on A verifies on B with nothing copied, and no node writes signing-key.json. A folder
// holding the file from before (a node moved to PostgreSQL) offers its key: tokens it signed
// still verify on every node.
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { loadSigningKey, SIGNING_KEY_FILE, SIGNING_KEY_TABLE } from "../../src/auth/signing-key";
import { newMasterKey } from "../backup/support";
import { tempDir, testApp } from "../helpers";
import { type SharedDatabase, sharedDatabase } from "../support/shared-database";

setDefaultTimeout(120_000);

type App = Awaited<ReturnType<typeof testApp>>;
const apps: App[] = [];
const dbs: SharedDatabase[] = [];
afterAll(async () => {
  for (const t of apps) await t.services.close();
  for (const db of dbs) await db.drop();
});

const node = async (db: SharedDatabase, key: string, dataDir = join(tempDir(), "data")) => {
  const t = await testApp({ CORPUS_DATABASE_URL: db.database.url, CORPUS_MASTER_KEY: key, CORPUS_DATA_DIR: dataDir });
  apps.push(t);
  return t;
};

test("a token minted on A verifies on B, nothing copied; the key is kept sealed in PostgreSQL, in no data folder", async () => {
  const db = await sharedDatabase();
  dbs.push(db);
  const key = newMasterKey();
  const a = await node(db, key);
  const b = await node(db, key);
  const { token } = await a.services.auth.issuer.issue("ines", ["corpus:search"]);
  expect((await b.services.auth.authenticate(`Bearer ${token}`, "corpus:search")).user).toBe("ines");
  const { token: fromB } = await b.services.auth.issuer.issue("ines", ["corpus:search"]);
  expect((await a.services.auth.authenticate(`Bearer ${fromB}`, "corpus:search")).user).toBe("ines");
  expect(b.services.auth.jwks()).toEqual(a.services.auth.jwks());
  for (const t of [a, b]) expect(existsSync(join(t.config.CORPUS_DATA_DIR, SIGNING_KEY_FILE))).toBe(false);
  // At rest: the public half and the private half sealed, never the private "d" in the clear.
  const [row] = await db.sql<{ stored: string }[]>`SELECT stored FROM ${db.sql(SIGNING_KEY_TABLE)}`;
  expect(JSON.parse(row!.stored)).toMatchObject({ kid: a.services.auth.key.kid, sealed_private_jwk: expect.any(String) });
  expect(JSON.parse(row!.stored).public_jwk.d).toBeUndefined();
});

test("a node moved from a data folder offers its file's key: it becomes every node's (the tokens it signed verify on all)", async () => {
  const db = await sharedDatabase();
  dbs.push(db);
  const key = newMasterKey();
  const old = join(tempDir(), "data");
  mkdirSync(old, { recursive: true, mode: 0o700 });
  const before = await loadSigningKey(old, Buffer.from(key, "base64"));
  const a = await node(db, key, old);
  expect(a.services.auth.key.kid).toBe(before.kid);
  const b = await node(db, key);
  expect(b.services.auth.key.kid).toBe(before.kid);
  // A file sealed under another master key is refused, not made every node's key.
  const other = join(tempDir(), "data");
  mkdirSync(other, { recursive: true, mode: 0o700 });
  await loadSigningKey(other, Buffer.from(newMasterKey(), "base64"));
  const fresh = await sharedDatabase();
  dbs.push(fresh);
  await expect(node(fresh, key, other)).rejects.toThrow();
});
