// The IMAP connector against a real Dovecot holding the Enron mailbox (scripts/test-servers.sh).
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { ImapFlow } from "imapflow";
import { ImapConnector, type ImapConfig } from "../../src/connectors/imap/connector";
import { testServers, type TestServers } from "../support/servers";

// Servers, builds and the model take longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

let servers: TestServers;
let config: ImapConfig;
let connector: ImapConnector;
let flagsBefore: Map<number, string>;

async function allFlags(): Promise<Map<number, string>> {
  const admin = new ImapFlow({ host: servers.imap.host, port: servers.imap.port, secure: false, auth: { user: servers.imap.user, pass: servers.imap.password }, logger: false });
  await admin.connect();
  await admin.mailboxOpen("INBOX", { readOnly: true });
  const out = new Map<number, string>();
  for (const m of await admin.fetchAll("1:*", { uid: true, flags: true }, { uid: true })) out.set(m.uid, [...(m.flags ?? [])].sort().join(" "));
  await admin.logout();
  return out;
}

beforeAll(async () => {
  servers = await testServers();
  config = { host: servers.imap.host, port: servers.imap.port, secure: false, user: servers.imap.user, password: servers.imap.password, mailbox: "INBOX" };
  connector = new ImapConnector(config);
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
      expect(r.source_url).toMatch(/^imap:\/\/enron@127\.0\.0\.1:\d+\/INBOX;UID=\d+$/);
      expect(r.date).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(String(r.metadata.message_id)).toMatch(/^<.+>$/);
    }
  });

  test("the date range applies to the messages' own dates", async () => {
    const records = await connector.search({ terms: ["energy"], phrases: [], limit: 20, dateFrom: new Date("2001-05-01T00:00:00Z"), dateTo: new Date("2001-06-01T00:00:00Z") });
    expect(records.length).toBeGreaterThan(0);
    // SENTSINCE/SENTBEFORE compare dates in the sender's zone: allow a day either side.
    for (const r of records) {
      expect(r.date! >= "2001-04-30").toBe(true);
      expect(r.date! < "2001-06-02").toBe(true);
    }
  });

  test("the connection is reused across searches", async () => {
    const started = performance.now();
    for (let i = 0; i < 3; i++) await connector.search({ terms: ["gas"], phrases: [], limit: 1 });
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  test("a write through the connector's own session is refused: the mailbox was opened with EXAMINE", async () => {
    const run = (connector as unknown as { run<T>(op: (c: ImapFlow) => Promise<T>): Promise<T> }).run.bind(connector);
    const readOnly = await run(async (c) => c.mailbox && c.mailbox.readOnly);
    expect(readOnly).toBe(true);
    const changed = await run(async (c) => c.messageFlagsAdd("1:*", ["\\Flagged"], { uid: true }));
    expect(changed).toBe(false);
  });

  test("a wrong password and a dead server are status error with a reason, not a crash", async () => {
    const wrong = new ImapConnector({ ...config, password: "not-the-password" });
    expect(await wrong.health()).toEqual({ status: "error", reason: `IMAP login failed for enron at 127.0.0.1:${config.port}` });
    await expect(wrong.search({ terms: ["x"], phrases: [], limit: 1 })).rejects.toThrow("IMAP login failed");
    const dead = new ImapConnector({ ...config, port: 1 });
    expect(await dead.health()).toEqual({ status: "error", reason: "IMAP server 127.0.0.1:1 refused the connection" });
    const missing = new ImapConnector({ ...config, mailbox: "Nope" });
    expect((await missing.health()).status).toBe("error");
  });
});
