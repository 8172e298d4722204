// An OAuth grant given again while a refresh of the one before is still at the provider: the
// refresh's answer, whatever it is (invalid_grant for a revoked grant, or a rotated refresh
// token), belongs to the grant it was asked for, and never replaces nor refuses the new one.
import { afterAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { ConnectorGrants, type GrantBinding, type GrantState, MAX_PENDING } from "../../../src/connectors/oauth/grants";
import type { Provider } from "../../../src/connectors/oauth/providers";
import { OPERATOR_PIN } from "../../../src/connectors/remote";
import { ConnectorRows, connectorRowMigrations, SqliteConnectorRecords } from "../../../src/connectors/rows";
import { ConnectorError } from "../../../src/connectors/types";
import { cryptoMigrations, UserKeys } from "../../../src/crypto/user-keys";
import { createLogger } from "../../../src/log";
import { openDatabase } from "../../../src/store/database";
import { tempDir } from "../../helpers";

/** A token endpoint whose refresh answers wait for the test to release them. */
const held: Array<(answer: Response) => void> = [];
let codes = 0;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const form = new URLSearchParams(await request.text());
    if (form.get("grant_type") === "authorization_code")
      return Response.json({ access_token: `access-${++codes}`, refresh_token: `refresh-${codes}`, expires_in: 3600 });
    return new Promise<Response>((resolve) => held.push(resolve));
  },
});
afterAll(() => server.stop(true));

const provider: Provider = {
  id: "local",
  title: "Local",
  authorization_endpoint: `http://127.0.0.1:${server.port}/authorize`,
  token_endpoint: `http://127.0.0.1:${server.port}/token`,
  client_id: "corpus",
  scopes: ["imap"],
  imap_hosts: ["imap.example.test"],
};
const binding: GrantBinding = { host: "imap.example.test", port: 993, secure: true, user: "alice@example.test", provider: "local" };

function grants() {
  const db = openDatabase(tempDir(), [...cryptoMigrations, ...connectorRowMigrations]);
  const rows = new ConnectorRows(new SqliteConnectorRecords(db), new UserKeys(db, randomBytes(32)));
  rows.insert(
    {
      owner: "alice",
      id: "mail",
      kind: "imap",
      label: "Mail",
      config: { ...binding, oauth: "local" },
      created_at: "2026-01-01",
    },
    1,
  );
  const clock = { now: Date.UTC(2026, 0, 1) };
  const g = new ConnectorGrants({
    rows,
    providers: new Map([["local", provider]]),
    pin: () => OPERATOR_PIN,
    publicUrl: "http://corpus.test",
    now: () => clock.now,
    log: createLogger("ERROR", { write() {} } as never),
  });
  const grant = async () => {
    const state = new URL(g.begin("alice", "mail", binding, () => {}).authorize_url).searchParams.get("state")!;
    await g.finish(new URLSearchParams({ state, code: "any" }));
  };
  const stored = () => rows.grant("alice", "mail") as { refresh_token: string; refused?: string };
  return { g, grant, stored, clock };
}

/** The refresh of the first grant under way at the provider, the grant given again meanwhile. */
async function refreshUnderWayWhileGrantedAgain() {
  const t = grants();
  await t.grant();
  expect(t.stored().refresh_token).toBe(`refresh-${codes}`);
  // Past the access token's life: the next token is a refresh, which the provider holds.
  t.clock.now += 2 * 3600_000;
  const refreshing = t.g.forConnector("alice", "mail").token(binding);
  while (held.length === 0) await Bun.sleep(5);
  await t.grant();
  const again = t.stored().refresh_token;
  expect(again).toBe(`refresh-${codes}`);
  return { ...t, refreshing, again };
}

test("the provider refusing the old grant's refresh leaves the new grant as it was: not refused, its token kept", async () => {
  const { g, stored, refreshing, again } = await refreshUnderWayWhileGrantedAgain();
  held.shift()!(Response.json({ error: "invalid_grant" }, { status: 400 }));
  await refreshing.catch((e) => expect(e).toBeInstanceOf(ConnectorError));
  expect(stored()).toMatchObject({ refresh_token: again });
  expect(stored().refused).toBeUndefined();
  expect((await g.forConnector("alice", "mail").token(binding)).accessToken).toBe(`access-${codes}`);
});

test("a rotated refresh token of the old grant does not replace the new grant's", async () => {
  const { g, stored, refreshing, again } = await refreshUnderWayWhileGrantedAgain();
  held.shift()!(Response.json({ access_token: "access-old", refresh_token: "refresh-rotated-old", expires_in: 3600 }));
  await refreshing.catch(() => {});
  expect(stored().refresh_token).toBe(again);
  expect((await g.forConnector("alice", "mail").token(binding)).accessToken).toBe(`access-${codes}`);
});

test("why attempts failed is kept for at most MAX_PENDING connectors: past it, the oldest reason is forgotten", async () => {
  const { g } = grants();
  const fail = (owner: string) => g.cancel(new URL(g.begin(owner, "mail", binding, () => {}).authorize_url).searchParams.get("state"));
  const cancelled: GrantState = {
    provider: "Local",
    state: "error",
    reason: "the last attempt to grant access failed: it was cancelled at the confirmation page",
  };
  fail("first");
  expect(await g.state("first", "mail", binding)).toEqual(cancelled);
  for (let n = 1; n < MAX_PENDING; n++) fail(`user-${n}`);
  expect(await g.state("first", "mail", binding)).toEqual(cancelled);
  fail("one-more");
  expect(await g.state("first", "mail", binding)).toEqual({ provider: "Local", state: "none" });
  expect(await g.state("one-more", "mail", binding)).toEqual(cancelled);
  // A new attempt clears the reason: it waits instead.
  g.begin("one-more", "mail", binding, () => {});
  expect((await g.state("one-more", "mail", binding)).state).toBe("waiting");
});

test("a grant that works stays granted when a new attempt fails, the failure beside it", async () => {
  const { g, grant } = grants();
  await grant();
  g.cancel(new URL(g.begin("alice", "mail", binding, () => {}).authorize_url).searchParams.get("state"));
  expect(await g.state("alice", "mail", binding)).toMatchObject({
    state: "granted",
    reason: "the last attempt to grant access failed: it was cancelled at the confirmation page",
  });
});
