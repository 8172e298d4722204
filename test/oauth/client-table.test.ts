// The table of OAuth clients cannot be held full by strangers (issue 35): ~500 addresses, 20
// registrations an hour each, filled it and every registration was refused (503) for a day,
// until never-used clients expired. A full table now drops clients never used (no grant) older
// than an hour, oldest first; every address together introduces at most CLIENTS_PER_HOUR an
// hour, so most of a full table is old enough to drop. A client in use is never dropped.
import { afterEach, expect, test } from "bun:test";
import { beginRequest } from "../../src/http/request-context";
import { CLIENTS_PER_HOUR, MAX_CLIENTS, REGISTRATIONS_PER_HOUR, UNUSED_CLIENT_SECONDS } from "../../src/oauth/registration";
import { SqliteOAuthStore } from "../../src/oauth/store";
import { BASE, testApp } from "../helpers";
import { fillClientTable, registeredClient } from "./support";

const REDIRECT = "https://client.example/cb";
const META = { redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", client_name: "A real app" };

const apps: Array<Awaited<ReturnType<typeof testApp>>> = [];
afterEach(async () => {
  for (const t of apps.splice(0)) await t.services.close();
});

async function server() {
  const t = await testApp();
  apps.push(t);
  return { t, store: new SqliteOAuthStore(t.db) };
}

/** POST /oauth/register from `address`. */
async function registerFrom(t: Awaited<ReturnType<typeof testApp>>, address: string) {
  const r = new Request(`${BASE}/oauth/register`, {
    method: "POST",
    body: JSON.stringify(META),
    headers: { "content-type": "application/json" },
  });
  beginRequest(r, address);
  const res = await t.app.handle(r);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The table filled with clients introduced `ageSeconds` ago, none ever used, as many addresses' registrations would. */
const fill = (store: SqliteOAuthStore, ageSeconds: number) => fillClientTable(store, Math.floor(Date.now() / 1000) - ageSeconds, REDIRECT);

test("attack: a table filled over an hour ago by clients never used makes room for a new one; a client in use is kept", async () => {
  const { t, store } = await server();
  // The oldest of all, but in use: a grant names it.
  store.putClient(registeredClient("corpus-in-use", "In use", 0, REDIRECT));
  store.putCode({
    code_hash: "h0",
    client_id: "corpus-in-use",
    user_id: "alice",
    redirect_uri: REDIRECT,
    code_challenge: "c",
    scopes: "corpus:search",
    expires_at: 0,
    grant_id: null,
  });
  store.redeemCode("h0", {
    grant_id: "g1",
    client_id: "corpus-in-use",
    user_id: "alice",
    scopes: "corpus:search",
    created_at: 0,
    revoked_at: null,
  });
  fill(store, UNUSED_CLIENT_SECONDS + 600);
  expect(store.countClients()).toBe(MAX_CLIENTS);
  // Before: 503 "too many registered clients" for a day.
  const r = await registerFrom(t, "192.0.2.10");
  expect(r.status).toBe(201);
  expect(store.client(String(r.body.client_id))).not.toBeNull();
  expect(store.client("corpus-in-use")).not.toBeNull();
  expect(store.countClients()).toBeLessThanOrEqual(MAX_CLIENTS);
  // The oldest never used went first.
  expect(store.client("corpus-filler-1")).not.toBeNull();
  expect(store.client(`corpus-filler-${MAX_CLIENTS - 1}`)).toBeNull();
});

test("attack: a client whose code is being exchanged (no grant yet) is not dropped by a full table", async () => {
  const { t, store } = await server();
  // The oldest of all, its person just approved it: a code issued, the grant made only when the app exchanges it.
  store.putClient(registeredClient("corpus-approved", "Just approved", 0, REDIRECT));
  store.putCode({
    code_hash: "h1",
    client_id: "corpus-approved",
    user_id: "alice",
    redirect_uri: REDIRECT,
    code_challenge: "c",
    scopes: "corpus:search",
    expires_at: Math.floor(Date.now() / 1000) + 60,
    grant_id: null,
  });
  fill(store, UNUSED_CLIENT_SECONDS + 600);
  expect((await registerFrom(t, "192.0.2.10")).status).toBe(201);
  // Before: dropped as never used, and the app's exchange of its code failed (invalid_client).
  expect(store.client("corpus-approved")).not.toBeNull();
  // Nor by the daily purge of clients never used (it is over a day old).
  store.purgeExpired(Math.floor(Date.now() / 1000));
  expect(store.client("corpus-approved")).not.toBeNull();
});

test("clients introduced within the hour are not dropped: a table full of them refuses (503)", async () => {
  const { t, store } = await server();
  fill(store, 60);
  expect((await registerFrom(t, "192.0.2.10")).status).toBe(503);
  expect(store.countClients()).toBe(MAX_CLIENTS);
});

test("attack: every address together introduces at most CLIENTS_PER_HOUR clients an hour, each at most REGISTRATIONS_PER_HOUR", async () => {
  const { t } = await server();
  const addresses = CLIENTS_PER_HOUR / REGISTRATIONS_PER_HOUR;
  // As the route registers (services.oauth.register), without an HTTP request each.
  for (let a = 0; a < addresses; a++)
    for (let i = 0; i < REGISTRATIONS_PER_HOUR; i++) t.services.oauth.register(META, `10.${a >> 8}.${a & 255}.1`);
  // Before: 201, and ~500 addresses filled the table for a day.
  const refused = await registerFrom(t, "192.0.2.10");
  expect(refused.status).toBe(429);
  expect(String(refused.body.error_description)).toContain("too many new clients");
});
