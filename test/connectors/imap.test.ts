// The IMAP connector against a real Dovecot holding the Enron mailbox (scripts/test-servers.sh).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ImapFlow } from "imapflow";
import type { ImapConfig } from "../../src/connectors/imap/config";
import { ImapConnector } from "../../src/connectors/imap/connector";
import { allowList, pinner, type Resolver } from "../../src/net/pin";
import { type TestServers, testServers } from "../support/servers";
import { imapConfig } from "../support/sources";
import { closingListener, countingProxy } from "../support/tcp";

/** Dovecot listens on loopback: allowed here as CORPUS_CONNECTOR_ALLOW_HOSTS=127.0.0.1 would. */
const LOOPBACK = { pin: pinner(allowList("127.0.0.1")) };

// Servers, builds and the model take longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

let servers: TestServers;
let config: ImapConfig;
let connector: ImapConnector;
let flagsBefore: Map<number, string>;

async function allFlags(): Promise<Map<number, string>> {
  const admin = new ImapFlow({
    host: servers.imap.host,
    port: servers.imap.port,
    secure: false,
    auth: { user: servers.imap.user, pass: servers.imap.password },
    logger: false,
  });
  await admin.connect();
  await admin.mailboxOpen("INBOX", { readOnly: true });
  const out = new Map<number, string>();
  for (const m of await admin.fetchAll("1:*", { uid: true, flags: true }, { uid: true }))
    out.set(m.uid, [...(m.flags ?? [])].sort().join(" "));
  await admin.logout();
  return out;
}

beforeAll(async () => {
  servers = await testServers();
  config = imapConfig(servers.imap);
  connector = new ImapConnector(config, LOOPBACK);
  flagsBefore = await allFlags();
});

afterAll(async () => {
  await connector.close();
  // D19: after every search and fetch, not one flag changed (\\Seen included).
  expect(await allFlags()).toEqual(flagsBefore);
});

describe("imap connector (real Dovecot)", () => {
  test("health reports the mailbox size", async () => {
    expect(await connector.health()).toEqual({ status: "ok", records: 1702 });
  });

  test("the server's SEARCH finds mails for a realistic question; records carry dates and metadata", async () => {
    const records = await connector.search({ terms: ["california", "price", "caps"], phrases: [], limit: 8 });
    expect(records).toHaveLength(8);
    for (const r of records) {
      expect(`${r.title} ${r.content} ${Object.values(r.metadata).join(" ")}`.toLowerCase()).toMatch(/california|price|caps/);
      expect(r.type).toBe("email");
      expect(r.source_url).toMatch(/^imap:\/\/enron@127\.0\.0\.1:\d+\/INBOX;UIDVALIDITY=\d+\/;UID=\d+$/);
      expect(r.date).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(String(r.metadata.message_id)).toMatch(/^<.+>$/);
    }
  });

  test("the date range applies to the messages' own dates", async () => {
    const records = await connector.search({
      terms: ["energy"],
      phrases: [],
      limit: 20,
      dateFrom: new Date("2001-05-01T00:00:00Z"),
      dateTo: new Date("2001-06-01T00:00:00Z"),
    });
    expect(records.length).toBeGreaterThan(0);
    // SENTSINCE/SENTBEFORE compare dates in the sender's zone: allow a day either side.
    for (const r of records) {
      expect(r.date! >= "2001-04-30").toBe(true);
      expect(r.date! < "2001-06-02").toBe(true);
    }
  });

  test("the connections are reused across searches: no new connection after the first searches", async () => {
    const proxy = await countingProxy(servers.imap);
    const counted = new ImapConnector({ ...config, port: proxy.port }, LOOPBACK);
    try {
      // Both connections opened (two users' searches at once), then six more searches, one after another and two at once.
      await Promise.all(["a", "b"].map((caller) => counted.search({ terms: ["gas"], phrases: [], limit: 1, caller })));
      const opened = proxy.connections;
      expect(opened).toBe(2);
      for (let i = 0; i < 4; i++) expect((await counted.search({ terms: ["gas"], phrases: [], limit: 1 })).length).toBe(1);
      await Promise.all(["a", "b"].map((caller) => counted.search({ terms: ["power"], phrases: [], limit: 1, caller })));
      expect(proxy.connections).toBe(opened);
    } finally {
      await counted.close();
      await proxy.close();
    }
  });

  test("a write through the connector's own session is refused: the mailbox was opened with EXAMINE", async () => {
    const run = (connector as unknown as { run<T>(caller: string, op: (c: ImapFlow) => Promise<T>): Promise<T> }).run.bind(connector);
    const readOnly = await run("test", async (c) => (c.mailbox === false ? undefined : c.mailbox.readOnly));
    expect(readOnly).toBe(true);
    const changed = await run("test", async (c) => c.messageFlagsAdd("1:*", ["\\Flagged"], { uid: true }));
    expect(changed).toBe(false);
  });

  test("a wrong password and a dead server are status error with a reason, not a crash", async () => {
    // A stopped clock: Dovecot delays failed logins, and the backoff must not run out meanwhile.
    const wrong = new ImapConnector({ ...config, password: "not-the-password" }, { ...LOOPBACK, now: () => 0 });
    expect(await wrong.health()).toEqual({ status: "error", reason: `IMAP login failed for enron at 127.0.0.1:${config.port}` });
    // Its two connections may be opened back to back; asked again at once after that: the same
    // reason, and no new login until the backoff is over.
    await expect(wrong.search({ terms: ["x"], phrases: [], limit: 1 })).rejects.toThrow(
      `IMAP login failed for enron at 127.0.0.1:${config.port}`,
    );
    await expect(wrong.search({ terms: ["x"], phrases: [], limit: 1 })).rejects.toThrow(
      `IMAP login failed for enron at 127.0.0.1:${config.port}; next attempt in 1 s`,
    );
    const dead = new ImapConnector({ ...config, port: 1 }, LOOPBACK);
    expect(await dead.health()).toEqual({ status: "error", reason: "IMAP server 127.0.0.1:1 cannot be reached" });
    const missing = new ImapConnector({ ...config, mailbox: "Nope" }, LOOPBACK);
    expect((await missing.health()).status).toBe("error");
  });
});

describe("imap connector: hosts checked, connections pinned and bounded (issue 13 items 6, 7)", () => {
  test("a loopback host not in the allow list is refused before any connection", async () => {
    const listener = await closingListener();
    try {
      for (const host of ["127.0.0.1", "127.1", "2130706433", "[::ffff:127.0.0.1]", "localhost"]) {
        const c = new ImapConnector({ ...config, host, port: listener.port });
        const status = await c.health();
        expect([host, status.status, status.reason]).toEqual([host, "error", expect.stringContaining("CORPUS_CONNECTOR_ALLOW_HOSTS")]);
      }
      expect(listener.connections).toBe(0);
    } finally {
      await listener.close();
    }
  });

  test("closed, refused: the same answer (no port scanner); retries back off on an injected clock", async () => {
    const listener = await closingListener();
    let clock = 5_000_000;
    const c = new ImapConnector({ ...config, port: listener.port }, { ...LOOPBACK, now: () => clock });
    const closed = await c.health();
    expect(closed).toEqual({ status: "error", reason: `IMAP server 127.0.0.1:${listener.port} cannot be reached` });
    expect(listener.connections).toBe(1);
    // Its two connections may be opened back to back; then the backoff: 1 s, 2 s …
    expect((await c.health()).reason).toBe(closed.reason);
    expect(listener.connections).toBe(2);
    expect((await c.health()).reason).toBe(`IMAP server 127.0.0.1:${listener.port} cannot be reached; next attempt in 1 s`);
    expect(listener.connections).toBe(2);
    clock += 1000;
    await c.health();
    expect(listener.connections).toBe(3);
    clock += 1000;
    await c.health();
    expect(listener.connections).toBe(3);
    await listener.close();
    const refused = await new ImapConnector({ ...config, port: listener.port }, LOOPBACK).health();
    expect(refused.reason).toBe(closed.reason);
    // Accepts and never greets: the same answer once the (here shortened) greeting timeout is over.
    const quiet = await closingListener("127.0.0.1", 0, true);
    const silent = await new ImapConnector({ ...config, port: quiet.port }, { ...LOOPBACK, connectTimeoutMs: 300 }).health();
    await quiet.close();
    expect(silent.reason?.replace(String(quiet.port), String(listener.port))).toBe(refused.reason);
  });

  test("DNS rebinding: the connection goes to the address checked, the name is looked up once", async () => {
    // Where a second answer would lead: a listener on 127.0.0.2 at Dovecot's port.
    const rebound = await closingListener("127.0.0.2", config.port);
    let calls = 0;
    const resolve: Resolver = async () => (calls++ === 0 ? ["127.0.0.1"] : ["127.0.0.2"]);
    const c = new ImapConnector({ ...config, host: "mail.rebind.test" }, { pin: pinner(allowList("127.0.0.1"), resolve) });
    try {
      expect(await c.health()).toEqual({ status: "ok", records: 1702 });
      const records = await c.search({ terms: ["gas"], phrases: [], limit: 1 });
      expect(records[0]!.source_url).toStartWith(`imap://enron@mail.rebind.test:${config.port}/INBOX;UIDVALIDITY=`);
      expect(calls).toBe(1);
      expect(rebound.connections).toBe(0);
    } finally {
      await c.close();
      await rebound.close();
    }
  });
});
