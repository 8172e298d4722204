// IMAP, PostgreSQL and MySQL hosts users add, through the real app (D26; issue 13 items 6, 7):
// non-public addresses in any spelling are 403 before any connection unless the operator lists
// them in CORPUS_CONNECTOR_ALLOW_HOSTS; database URLs are read by corpus (400 for parameters);
// a server that closes after authentication gets a bounded number of connections.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { ConfigError } from "../../src/config";
import { bearer, postJson, req, tempDir, testApp, testConfig } from "../helpers";
import { chinookInvoices } from "../support/chinook";
import { type HostilePostgres, hostilePostgres } from "../support/hostile-postgres";
import { type TestServers, testServers } from "../support/servers";
import { ANSWERING } from "../support/sources";

setDefaultTimeout(60_000);

let servers: TestServers;
let listener: net.Server;
let listenerPort: number;
let knocks = 0;
beforeAll(async () => {
  servers = await testServers();
  // Stands for an internal service on loopback: it must never be connected to.
  listener = net.createServer((s) => {
    knocks++;
    s.destroy();
  });
  await new Promise<void>((r) => listener.listen(0, "127.0.0.1", () => r()));
  listenerPort = (listener.address() as net.AddressInfo).port;
});
afterAll(() => listener?.close());

async function app(env: Record<string, string> = {}) {
  const t = await testApp(env);
  const token = (await t.services.auth.issuer.issue("alice", ["connectors:read", "connectors:write"])).token;
  const add = async (body: unknown) => {
    const r = await t.app.handle(postJson("/v1/connectors", body, bearer(token)));
    return { status: r.status, body: (await r.json()) as Record<string, any> };
  };
  const list = async () =>
    ((await (await t.app.handle(req("/v1/connectors", { headers: bearer(token) }))).json()) as { connectors: Array<Record<string, any>> })
      .connectors;
  return { ...t, add, list };
}

const imap = (host: string, port = listenerPort) => ({
  id: "mail",
  kind: "imap",
  config: { host, port, secure: false, user: "u", password: "p" },
});
const pg = (url: string) => ({
  id: "shop",
  kind: "sql",
  config: { url, tables: [{ name: "invoice", id: "invoice_id", title: "billing_city", text: ["billing_country"] }] },
});

describe("users' IMAP and PostgreSQL hosts (CORPUS_CONNECTOR_ALLOW_HOSTS unset)", () => {
  test("every spelling of loopback, private or link-local is 403 before any connection; nothing is saved", async () => {
    const t = await app();
    try {
      const hosts = [
        "127.0.0.1",
        "127.1",
        "2130706433",
        "0x7f.1",
        "0177.0.0.1",
        "0x7f000001",
        "0.0.0.0",
        "0",
        "[::1]",
        "::1",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "::ffff:7f00:1",
        "[::]",
        "localhost",
        "LOCALHOST.",
        "169.254.169.254",
        "10.0.0.1",
        "192.168.1.1",
        "100.64.0.1",
        "[fd00::1]",
        "[64:ff9b::7f00:1]",
      ];
      for (const host of hosts) {
        const r = await t.add(imap(host));
        expect([host, r.status, r.body.type]).toEqual([host, 403, "forbidden"]);
        expect(r.body.message).toStartWith("config.host: ");
        expect(r.body.message).toContain("CORPUS_CONNECTOR_ALLOW_HOSTS");
      }
      for (const host of ["127.0.0.1", "127.1", "2130706433", "[::ffff:127.0.0.1]", "[::1]", "localhost"]) {
        const r = await t.add(pg(`postgres://shop:pw@${host}:${listenerPort}/chinook`));
        expect([host, r.status]).toEqual([host, 403]);
        expect(r.body.message).toStartWith("config.url: ");
      }
      expect(await t.list()).toEqual([]);
    } finally {
      await t.services.close();
    }
    // MySQL and MariaDB hosts alike (an app of their own: one user's requests a minute are limited).
    const u = await app();
    try {
      for (const host of ["127.0.0.1", "127.1", "2130706433", "[::ffff:127.0.0.1]", "[::1]", "localhost"]) {
        for (const scheme of ["mysql", "mariadb"]) {
          const r = await u.add(pg(`${scheme}://shop:pw@${host}:${listenerPort}/chinook`));
          expect([scheme, host, r.status]).toEqual([scheme, host, 403]);
          expect(r.body.message).toStartWith("config.url: ");
        }
      }
      expect(knocks).toBe(0);
      expect(await u.list()).toEqual([]);
    } finally {
      await u.services.close();
    }
  });

  test("database URLs: parameters, a missing user, several hosts or a socket path are 400", async () => {
    const t = await app();
    try {
      for (const [url, message] of [
        [
          "postgres://shop:pw@db.example/chinook?options=-c%20default_transaction_read_only%3Doff",
          'config.url: the parameter "options" is not allowed',
        ],
        [
          "postgres://shop:pw@db.example/chinook?sslmode=disable&target_session_attrs=any",
          'config.url: the parameter "target_session_attrs" is not allowed',
        ],
        ["postgres://shop:pw@db.example/chinook?host=/var/run/postgresql", 'config.url: the parameter "host" is not allowed'],
        ["postgres://db.example/chinook", "config.url: must name the user"],
        ["postgres://shop@h1,h2/chinook", "config.url: the host must be one host name or IP address"],
        ["postgres://shop@%2Fvar%2Frun%2Fpostgresql/chinook", "config.url: the host must be one host name or IP address"],
        ["mysql://shop:pw@db.example/chinook?socket=/run/mysqld/mysqld.sock", 'config.url: the parameter "socket" is not allowed'],
        ["mariadb://shop:pw@db.example", "config.url: must name the database"],
        // Not taken for a SQLite path ("the path must be absolute"): the scheme is named.
        ["oracle://shop:pw@db.example/orcl", 'config.url: the scheme "oracle://" is not supported'],
      ] as const) {
        const r = await t.add(pg(url));
        expect([url, r.status, r.body.type]).toEqual([url, 400, "bad_request"]);
        expect(r.body.message).toStartWith(message);
      }
      const r = await t.add(imap("not a host"));
      expect([r.status, r.body.message]).toEqual([400, expect.stringMatching(/^config\.host: /)]);
    } finally {
      await t.services.close();
    }
  });

  test("operator connectors (CORPUS_CONNECTORS_FILE) are not bound by the list", async () => {
    const file = join(tempDir(), "connectors.json");
    writeFileSync(file, JSON.stringify([pg(servers.pgUrl)]));
    const t = await app({ CORPUS_CONNECTORS_FILE: file });
    try {
      expect(await t.list()).toEqual([
        expect.objectContaining({ id: "shop", owner: "operator", status: expect.stringMatching(ANSWERING), records: 412 }),
      ]);
    } finally {
      await t.services.close();
    }
  });

  test("a malformed list stops start-up with one line", () => {
    expect(() => testConfig({ CORPUS_CONNECTOR_ALLOW_HOSTS: "10.0.0.0/40" })).toThrow(ConfigError);
    expect(() => testConfig({ CORPUS_CONNECTOR_ALLOW_HOSTS: "10.0.0.0/40" })).toThrow(
      'CORPUS_CONNECTOR_ALLOW_HOSTS="10.0.0.0/40" is not allowed',
    );
    expect(() => testConfig({ CORPUS_CONNECTOR_ALLOW_HOSTS: "db one" })).toThrow(ConfigError);
    expect(
      testConfig({ CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1, db.internal, 10.0.0.0/8, [::1]" }).CORPUS_CONNECTOR_ALLOW_HOSTS,
    ).toContain("db.internal");
  });
});

describe("users' hosts listed in CORPUS_CONNECTOR_ALLOW_HOSTS", () => {
  let hostile: HostilePostgres;
  beforeAll(async () => {
    hostile = await hostilePostgres("close-after-auth");
  });
  afterAll(() => hostile?.close());

  test("listed hosts connect; others stay refused", async () => {
    const t = await app({ CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1" });
    try {
      const ok = await t.add({
        ...imap(servers.imap.host, servers.imap.port),
        config: { ...imap(servers.imap.host, servers.imap.port).config, user: servers.imap.user, password: servers.imap.password },
      });
      expect(ok).toMatchObject({ status: 200, body: { status: "ok", records: 1702 } });
      expect((await t.add({ ...imap("127.0.0.2"), id: "other" })).status).toBe(403);
      const shop = await t.add({ ...pg(servers.mysqlUrl), config: { url: servers.mysqlUrl, tables: [chinookInvoices("mysql")] } });
      expect(shop).toMatchObject({ status: 200, body: { status: expect.stringMatching(ANSWERING), records: 412 } });
      expect(JSON.stringify(shop.body)).not.toContain("shop-pass");
      // Stored sealed (D20): no file of the data folder spells the password.
      const dir = t.config.CORPUS_DATA_DIR;
      for (const f of readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile()))
        expect({ file: f.name, holds: readFileSync(join(dir, f.name)).includes("shop-pass") }).toEqual({ file: f.name, holds: false });
    } finally {
      await t.services.close();
    }
  });

  test("one POST of a server that closes after authentication: a bounded number of connections, none after the answer", async () => {
    const t = await app({ CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1" });
    try {
      const r = await t.add(pg(`postgres://shop:pw@127.0.0.1:${hostile.port}/chinook`));
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ status: "error", reason: expect.stringMatching(/cannot be reached; next attempt in 1 s$/) });
      const atAnswer = hostile.connections;
      expect(atAnswer).toBeGreaterThan(0);
      expect(atAnswer).toBeLessThanOrEqual(2);
      // The old driver went on at ~600 connections a second after the answer.
      await Bun.sleep(50);
      expect(hostile.connections).toBe(atAnswer);
    } finally {
      await t.services.close();
    }
  });
});

describe("what may land while the host is looked up", () => {
  test("two adds of one id at once: one is saved; the other is 409 if it differs, the same answer if it is the same (never a 500)", async () => {
    const t = await app({ CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1" });
    try {
      const body = { ...imap("127.0.0.1"), config: { ...imap("127.0.0.1").config, port: 1 } };
      const other = { ...body, label: "another connector" };
      const statuses = (await Promise.all([t.add(body), t.add(other)])).map((r) => r.status).sort();
      expect(statuses).toEqual([200, 409]);
      expect((await t.list()).filter((c) => c.id === "mail")).toHaveLength(1);
      // The same POST again (a retry after a timeout): answered with the connector as it stands (issue 18, gap 8).
      const again = (await Promise.all([t.add(body), t.add(body)])).map((r) => r.status);
      expect(again.every((s) => s === 200 || s === 409)).toBe(true);
      expect((await t.list()).filter((c) => c.id === "mail")).toHaveLength(1);
    } finally {
      await t.services.close();
    }
  });

  test("the user deleted during the lookup: the add is 401 and nothing of theirs is written", async () => {
    const t = await app({ CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1" });
    try {
      // The lookup is held open until the deletion has run.
      let parked!: () => void;
      let release!: () => void;
      const atLookup = new Promise<void>((r) => (parked = r));
      const gate = new Promise<void>((r) => (release = r));
      const access = (t.services.connectors as unknown as { access: { pin(user: string): (host: string) => Promise<unknown> } }).access;
      const pinOf = access.pin.bind(access);
      access.pin = (user) => {
        const pin = pinOf(user);
        return async (host) => {
          parked();
          await gate;
          return pin(host);
        };
      };
      const token = (await t.services.auth.issuer.issue("late", ["connectors:write"])).token;
      const pending = t.app.handle(
        postJson("/v1/connectors", { ...imap("127.0.0.1"), config: { ...imap("127.0.0.1").config, port: 1 } }, bearer(token)),
      );
      await atLookup;
      expect((await t.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(token) }))).status).toBe(200);
      release();
      expect((await pending).status).toBe(401);
      expect(t.db.query("SELECT count(*) AS n FROM connectors WHERE user_id = 'late'").get()).toEqual({ n: 0 });
    } finally {
      await t.services.close();
    }
  });
});
