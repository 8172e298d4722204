// The sign-in throttle and the dynamic-registration allowance across two nodes on one PostgreSQL
// (D27, D33): two apps on the shared database (each its own connections and data folder, the same
// master key) count one stranger's attempts together, so a balancer of two nodes gives them the
// attempts of one. What PostgreSQL keeps of them names no account and no address.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { REGISTRATIONS_PER_HOUR } from "../../src/oauth/registration";
import { ACCOUNT_ADDRESS_FAILURES } from "../../src/oauth/throttle";
import { THROTTLE_EVENTS, THROTTLE_KNOWN } from "../../src/oauth/throttle-postgres";
import { newMasterKey } from "../backup/support";
import { tempDir, testApp } from "../helpers";
import { type SharedDatabase, sharedDatabase } from "../support/shared-database";

setDefaultTimeout(120_000);

type App = Awaited<ReturnType<typeof testApp>>;
let db: SharedDatabase;
let a: App;
let b: App;

beforeAll(async () => {
  db = await sharedDatabase();
  const key = newMasterKey();
  const node = () => testApp({ CORPUS_DATABASE_URL: db.database.url, CORPUS_MASTER_KEY: key, CORPUS_DATA_DIR: join(tempDir(), "data") });
  a = await node();
  b = await node();
  await a.services.accounts.add("bob", "correct horse battery staple");
});
afterAll(async () => {
  await a?.services.close();
  await b?.services.close();
  await db?.drop();
});

test("a stranger guessing bob's password from one address gets ACCOUNT_ADDRESS_FAILURES tries on both nodes together, not on each", async () => {
  const address = "198.51.100.23";
  for (let i = 0; i < ACCOUNT_ADDRESS_FAILURES; i++) {
    const node = i % 2 === 0 ? a : b;
    expect(await node.services.oauth.login("bob", `guess-${i}`, address)).toEqual({ ok: false });
  }
  // The next, on either node, is refused before any hash; bob from his own address is not.
  for (const node of [a, b]) {
    const refused = await node.services.oauth.login("bob", "guess-next", address);
    expect(refused.ok === false && refused.refused?.reason).toBe("throttled");
  }
  expect(await b.services.oauth.login("bob", "correct horse battery staple", "192.0.2.10")).toEqual({ ok: true });

  // At rest: keyed hashes and times, never bob's name nor the address.
  const rows = JSON.stringify([
    ...(await db.sql`SELECT * FROM ${db.sql(THROTTLE_EVENTS)}`),
    ...(await db.sql`SELECT * FROM ${db.sql(THROTTLE_KNOWN)}`),
  ]);
  expect(rows).not.toContain("bob");
  expect(rows).not.toContain("198.51.100");
  expect(rows).not.toContain("192.0.2");
});

test("one address registers at most REGISTRATIONS_PER_HOUR clients an hour on both nodes together", async () => {
  const meta = { redirect_uris: ["http://127.0.0.1:9/callback"], token_endpoint_auth_method: "none", client_name: "An app" };
  const address = "203.0.113.77";
  for (let i = 0; i < REGISTRATIONS_PER_HOUR; i++) await (i % 2 === 0 ? a : b).services.oauth.register(meta, address);
  for (const node of [a, b]) {
    const refused = await node.services.oauth.register(meta, address).then(
      () => undefined,
      (error: unknown) => error as { status?: number; message?: string },
    );
    expect(refused?.message).toContain("too many registrations from this address");
  }
  // Another address still registers.
  expect(await a.services.oauth.register(meta, "203.0.113.78")).toHaveProperty("client_id");
});
