// The SQL connector's MySQL/MariaDB connections, against the test MariaDB (scripts/test-servers.sh)
// and hostile listeners: made of the connector's config only (D26), TLS as the URL asks, to the
// address checked, bounded attempts; and a hostile table (a million rows, 1 MB cells) that is
// read within bounds while the event loop keeps turning. The Chinook cases are in sql.test.ts;
// cells of 1 MB cut by the server in sql-server-cells.test.ts.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { SQL } from "bun";
import type { SqlTable } from "../../src/connectors/sql/config";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { allowList, pinner, type Resolver } from "../../src/net/pin";
import { chinookCustomers, chinookInvoices } from "../support/chinook";
import { FREE_SHARE, turnsWhile } from "../support/event-loop";
import { mysqlAdmin, mysqlTable } from "../support/mysql-admin";
import { type TestServers, testServers } from "../support/servers";
import { closingListener } from "../support/tcp";

setDefaultTimeout(120_000);

const LOOPBACK = { pin: pinner(allowList("127.0.0.1")) };
const tables: SqlTable[] = [chinookInvoices("mysql"), chinookCustomers(["FirstName", "LastName", "Country"], "mysql")];

/** One statement on the connector's own connection (the tests' look inside). */
function selectOn(c: SqlConnector, sql: string): Promise<Record<string, unknown>[]> {
  const internals = c as unknown as {
    withDriver<T>(fn: (d: { select(sql: string, p: unknown[]): Promise<Record<string, unknown>[]> }) => Promise<T>): Promise<T>;
  };
  return internals.withDriver((d) => d.select(sql, []));
}

let servers: TestServers;
beforeAll(async () => {
  servers = await testServers();
});

describe("sql (mysql): the connection is made of the connector's config only (D26)", () => {
  test("DATABASE_URL, MYSQL_*, MARIADB_* and TLS_* of the server's environment are never used", async () => {
    const admin = servers.mysqlAdminUrl;
    const port = new URL(servers.mysqlUrl).port;
    // Each would change the connection if Bun's client read it: another user and database, the
    // server's socket instead of the address checked, a password for a URL that gives none.
    const hostile: Record<string, string> = {
      DATABASE_URL: `${admin.replace("/chinook", "/mysql")}?socket=${servers.mysqlSocket}`,
      MYSQL_URL: admin.replace("/chinook", "/mysql"),
      MARIADB_URL: admin.replace("/chinook", "/mysql"),
      TLS_DATABASE_URL: admin,
      MYSQL_DATABASE: "mysql",
      MARIADB_DATABASE: "mysql",
      MYSQL_USER: "admin",
      MYSQL_PASSWORD: "shop-pass",
      MARIADB_PASSWORD: "shop-pass",
      MYSQL_PWD: "shop-pass",
      MYSQL_HOST: "127.0.0.1",
      MYSQL_PORT: port,
    };
    const saved = Object.fromEntries(Object.keys(hostile).map((k) => [k, process.env[k]]));
    Object.assign(process.env, hostile);
    const made: SqlConnector[] = [];
    const connector = (url: string) => {
      made.push(new SqlConnector({ url, tables }, undefined, LOOPBACK));
      return made.at(-1)!;
    };
    try {
      const c = connector(servers.mysqlUrl);
      expect(await selectOn(c, "SELECT CURRENT_USER() AS who, DATABASE() AS db")).toEqual([{ who: "shop@127.0.0.1", db: "chinook" }]);
      // No password in the URL: none is sent (MYSQL_PASSWORD would have let it in).
      const bare = await connector(servers.mysqlUrl.replace(":shop-pass@", "@")).health();
      expect(bare).toEqual({ status: "error", reason: expect.stringContaining("login failed") });
      // A port nothing listens on: unreachable, not the socket DATABASE_URL names.
      const dead = await connector("mysql://shop:shop-pass@127.0.0.1:1/chinook").health();
      expect(dead).toEqual({ status: "error", reason: "database mysql://shop:***@127.0.0.1:1/chinook cannot be reached" });
      expect(process.env.MYSQL_PWD).toBe("shop-pass");
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await Promise.all(made.map((c) => c.close()));
    }
  });

  test("sslmode: disable is plain, require is TLS, verify-full refuses a certificate no authority signed", async () => {
    const cipher = async (mode: string) => {
      const c = new SqlConnector({ url: `${servers.mysqlUrl}?sslmode=${mode}`, tables }, undefined, LOOPBACK);
      try {
        const [row] = await selectOn(c, "SHOW SESSION STATUS LIKE 'Ssl_cipher'");
        return String(row?.Value);
      } finally {
        await c.close();
      }
    };
    expect(await cipher("disable")).toBe("");
    expect(await cipher("require")).not.toBe("");
    // The test server's certificate is self-signed: no connection, and the same words as an unreachable server.
    const checked = new SqlConnector({ url: `${servers.mysqlUrl}?sslmode=verify-full`, tables }, undefined, LOOPBACK);
    const port = new URL(servers.mysqlUrl).port;
    expect(await checked.health()).toEqual({
      status: "error",
      reason: `database mysql://shop:***@127.0.0.1:${port}/chinook?sslmode=verify-full cannot be reached`,
    });
    await checked.close();
  });

  test("DNS rebinding: a client resolves once and connects to the address it checked", async () => {
    const port = Number(new URL(servers.mysqlUrl).port);
    // Where a rebinding would lead: a listener on 127.0.0.2 at the real server's port.
    const rebound = await closingListener("127.0.0.2", port);
    let calls = 0;
    const resolve: Resolver = async () => (calls++ === 0 ? ["127.0.0.1"] : ["127.0.0.2"]);
    const c = new SqlConnector({ url: servers.mysqlUrl.replace("127.0.0.1", "db.rebind.test"), tables }, undefined, {
      pin: pinner(allowList("127.0.0.1"), resolve),
    });
    try {
      expect(await c.health()).toEqual({ status: "ok", records: 412 + 59 });
      expect(calls).toBe(1);
      // The next client resolves again, and what it is answered is checked again.
      await c.close();
      expect((await c.health()).reason).toContain("db.rebind.test is not a public address");
      expect(rebound.connections).toBe(0);
    } finally {
      await c.close();
      await rebound.close();
    }
  });

  test("a server that closes every connection: bounded sockets per attempt, attempts with backoff on an injected clock", async () => {
    const server = await closingListener();
    let clock = 1_000_000;
    // Bun's client tries again by itself within the connect timeout, backing off (10 sockets in 1 s, 18 in 5 s: measured), then gives up.
    const c = new SqlConnector({ url: `mysql://shop:x@127.0.0.1:${server.port}/chinook`, tables }, undefined, {
      ...LOOPBACK,
      now: () => clock,
      connectTimeoutMs: 1_000,
    });
    const PER_ATTEMPT = 20;
    try {
      const reason = `database mysql://shop:***@127.0.0.1:${server.port}/chinook cannot be reached`;
      expect(await c.health()).toEqual({ status: "error", reason });
      const first = server.connections;
      expect(first).toBeGreaterThan(0);
      expect(first).toBeLessThanOrEqual(PER_ATTEMPT);
      await Bun.sleep(50); // nothing runs behind the answer
      expect(server.connections).toBe(first);
      // The pool's two attempts back to back, then none until the backoff is over.
      await c.health();
      const second = server.connections;
      expect(second).toBeLessThanOrEqual(2 * PER_ATTEMPT);
      expect(await c.health()).toEqual({ status: "error", reason: `${reason}; next attempt in 1 s` });
      expect(server.connections).toBe(second);
      // After 1 s one more attempt; then 2 s, 4 s, 8 s … apart (as PostgreSQL's, sql.test.ts).
      const attemptedAt: number[] = [];
      for (let second = 1; second <= 15; second++) {
        clock += 1000;
        const before = server.connections;
        await c.health();
        if (server.connections > before) attemptedAt.push(second);
      }
      expect(attemptedAt).toEqual([1, 3, 7, 15]);
    } finally {
      await c.close();
      await server.close();
    }
  });

  test("a port that accepts and never speaks: the same answer as a refused one, once the connect timeout is over", async () => {
    const quiet = await closingListener("127.0.0.1", 0, true);
    try {
      const c = new SqlConnector({ url: `mysql://shop:x@127.0.0.1:${quiet.port}/chinook`, tables }, undefined, {
        ...LOOPBACK,
        connectTimeoutMs: 300,
      });
      expect(await c.health()).toEqual({
        status: "error",
        reason: `database mysql://shop:***@127.0.0.1:${quiet.port}/chinook cannot be reached`,
      });
      await c.close();
    } finally {
      await quiet.close();
    }
  });
});

// Bun's client sets its session's time_zone to +00:00 (measured): a TIMESTAMP, which the server
// keeps as an instant, reads and compares as the UTC dates corpus sends (DATETIME has no zone).
test("a TIMESTAMP is read and compared in UTC on a server whose time zone is not (the test server's: +05:00)", async () => {
  const made = await mysqlTable("corpus_zone", async (admin) => {
    await admin.unsafe("CREATE TABLE corpus_zone (id INT PRIMARY KEY, title VARCHAR(20), placed TIMESTAMP NULL)");
    expect((await admin.unsafe("SELECT @@global.time_zone AS tz"))[0].tz).toBe("+05:00");
    // 15:00 in the server's zone: 10:00 UTC.
    await admin.unsafe("SET time_zone = '+05:00'");
    await admin.unsafe("INSERT INTO corpus_zone VALUES (1, 'parcel', '2021-06-12 15:00:00')");
  });
  const c = new SqlConnector(
    { url: made.url, tables: [{ name: "corpus_zone", id: "id", title: "title", text: ["title"], date: "placed" }] },
    undefined,
    LOOPBACK,
  );
  try {
    const [found] = await c.search({ terms: ["parcel"], phrases: [], limit: 5 });
    expect(found?.date).toBe("2021-06-12T10:00:00.000Z");
    const after = (hour: string) => c.search({ terms: ["parcel"], phrases: [], limit: 5, dateFrom: new Date(`2021-06-12T${hour}:00:00Z`) });
    expect((await after("09")).length).toBe(1);
    expect((await after("11")).length).toBe(0);
  } finally {
    await c.close();
    await made.drop();
  }
});

describe("sql (mysql): a hostile table, a million rows and 1 MB cells", () => {
  const ROWS = 1_000_000;
  const BIG_ROWS = 24;
  const MB = 1024 * 1024;
  const hostile: SqlTable = { name: "corpus_hostile", id: "id", title: "title", text: ["note"], date: "placed" };
  let admin: SQL;
  let c: SqlConnector;
  /** Bytes MariaDB has sent to every client so far. */
  const bytesSent = async () => Number((await admin.unsafe("SHOW GLOBAL STATUS LIKE 'Bytes_sent'"))[0].Value);

  beforeAll(async () => {
    admin = await mysqlAdmin();
    await admin.unsafe("DROP TABLE IF EXISTS corpus_hostile");
    // Dated, with an index on the date as a shop's orders are (without one, sorting a million rows
    // for the newest may take the whole statement timeout on a busy machine: an error, not a stall).
    await admin.unsafe(
      "CREATE TABLE corpus_hostile (id INT PRIMARY KEY, title VARCHAR(100), note LONGTEXT, placed DATETIME, INDEX (placed))",
    );
    // A million short rows (MariaDB's sequence engine), the newest BIG_ROWS of them 1 MB each.
    await admin.unsafe(
      `INSERT INTO corpus_hostile SELECT seq, CONCAT('order ', seq), 'placed', TIMESTAMP '2020-01-01 00:00:00' + INTERVAL seq SECOND FROM seq_1_to_${ROWS}`,
    );
    await admin.unsafe(`UPDATE corpus_hostile SET note = CONCAT('bulky ', REPEAT('x', ${MB})) WHERE id > ${ROWS - BIG_ROWS}`);
    c = new SqlConnector({ url: servers.mysqlUrl, tables: [hostile] }, undefined, LOOPBACK);
  });

  afterAll(async () => {
    await c?.close();
    await admin?.unsafe("DROP TABLE IF EXISTS corpus_hostile");
    await admin?.close();
  });

  test("rows read ahead to be embedded (the newest) skip the 1 MB rows and stay small", async () => {
    const before = await bytesSent();
    const records = await c.newest(50);
    expect(records.length).toBe(50);
    expect(records.every((r) => !r.content.includes("bulky"))).toBe(true);
    expect((await bytesSent()) - before).toBeLessThan(50 * 2_000 + 64 * 1024);
  });

  test("a scan of the million rows for words none holds, and a count, run on the server: the event loop keeps turning", async () => {
    const { value, share } = await turnsWhile(async () => {
      // Nothing found, or (on a machine busy enough) cut by the statement timeout: bounded either way.
      const found = await c.search({ terms: ["nowhere", "absent"], phrases: [], limit: 20 }).catch((e: Error) => e.message);
      const health = await c.health();
      return { found, health };
    });
    const shown = servers.mysqlUrl.replace(":shop-pass@", ":***@");
    expect([[], `database ${shown} took longer than 5 s`] as unknown[]).toContainEqual(value.found);
    expect(value.health).toEqual({ status: "ok", records: ROWS });
    expect(share).toBeGreaterThan(FREE_SHARE);
  });

  test("a statement past the timeout is cut by the server (max_statement_time), and the connection serves the next one", async () => {
    await expect(selectOn(c, "SELECT SLEEP(30)")).rejects.toThrow(/took longer than 5 s/);
    expect((await c.search({ terms: ["bulky"], phrases: [], limit: 1 })).length).toBe(1);
  });
});

describe("sql (mysql): a column whose collation keeps accents and case is still asked folded (fold.ts)", () => {
  // A binary collation (or latin1) compares bytes: LIKE '%zurich%' in the column's own collation
  // would find neither 'Zürich' nor 'ZURICH'; the connector asks utf8mb4_unicode_ci whatever the
  // column's (a guard: the cell cast to CHAR took the connection's accent-insensitive one before).
  const TABLE = "folded_cities";
  let table: Awaited<ReturnType<typeof mysqlTable>>;
  let c: SqlConnector;
  beforeAll(async () => {
    table = await mysqlTable(TABLE, async (admin) => {
      await admin.unsafe(
        `CREATE TABLE ${TABLE} (id INT PRIMARY KEY, city VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, note VARCHAR(64) CHARACTER SET latin1)`,
      );
      await admin.unsafe(
        `INSERT INTO ${TABLE} VALUES (1, 'Zürich', 'x'), (2, 'ZURICH', 'x'), (3, 'Bern', 'Montréal'), (4, 'Basel', 'Geneva')`,
      );
    });
    c = new SqlConnector(
      { url: table.url, tables: [{ name: TABLE, id: "id", title: "city", text: ["city", "note"] }] },
      undefined,
      LOOPBACK,
    );
  });
  afterAll(async () => {
    await c.close();
    await table.drop();
  });

  test("'zurich' finds Zürich and ZURICH in a utf8mb4_bin column; 'montreal' Montréal in a latin1 one", async () => {
    const ids = async (needle: string) => (await c.search({ terms: [needle], phrases: [], limit: 10 })).map((r) => r.id).sort();
    expect(await ids("zurich")).toEqual([`${TABLE}/1`, `${TABLE}/2`]);
    expect(await ids("montreal")).toEqual([`${TABLE}/3`]);
    expect(await ids("básel")).toEqual([`${TABLE}/4`]);
  });
});
