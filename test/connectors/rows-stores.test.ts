// One suite, two stores (D33): the connectors' rows and OAuth grants kept by the embedded
// database and by the shared PostgreSQL (a real server on loopback), through the one ConnectorRows
// that seals configs and grants with the owner's data key. Then, PostgreSQL alone, two nodes (two
// registries, each with its own connections and embedded database, on one shared database): a
// connector added on B is listed and searched from A at once; changed or removed on A, B lists
// and searches it so; two nodes adding at once stay under the cap; the deletion's transaction
// erases the room or, rolled back, leaves it whole; and a dump of the database spells no password.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { OPERATOR_OWNER } from "../../src/auth/subjects";
import { ConnectorRegistry } from "../../src/connectors/registry";
import { ConnectorRows, connectorRowMigrations, SqliteConnectorRecords } from "../../src/connectors/rows";
import { CONNECTOR_TABLES, PostgresConnectorRecords } from "../../src/connectors/rows-postgres";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { createLogger } from "../../src/log";
import { MIGRATIONS } from "../../src/migrations";
import { openDatabase } from "../../src/store/database";
import { migrate } from "../../src/store/migrations";
import { tempDir, testConfig } from "../helpers";
import { erasedInDeletion, type SharedDatabase, sharedDatabase, storeSuite } from "../support/shared-database";

/** The users' data keys (a room shared by "pgkeys", not here): one for every node of a test. */
function userKeys(): UserKeys {
  const db = new Database(":memory:");
  migrate(db, cryptoMigrations);
  return new UserKeys(db, randomBytes(32));
}

interface Store {
  rows: ConnectorRows;
  close(): Promise<void>;
}

const definition = (
  owner: string,
  id: string,
  config: Record<string, unknown> = { path: `/srv/${owner}/${id}` },
  at = "2026-01-01T00:00:00Z",
) => ({
  owner,
  id,
  kind: "files" as const,
  label: id,
  config,
  created_at: at,
});

function suite(name: string, open: (keys: UserKeys) => Promise<Store>) {
  const keys = userKeys();
  storeSuite(
    name,
    () => open(keys),
    (store) => {
      const r = () => store().rows;

      test("a connector added is listed with its config opened, oldest first; its id taken again, or one past the cap, is refused", async () => {
        expect(await r().insert(definition("ann", "b-docs", undefined, "2026-01-02T00:00:00Z"), 3)).toEqual({ added: true });
        expect(await r().insert(definition("ann", "a-mail", { host: "imap.test", password: "pw" }, "2026-01-03T00:00:00Z"), 3)).toEqual({
          added: true,
        });
        expect((await r().of("ann")).map((d) => [d.id, d.config])).toEqual([
          ["b-docs", { path: "/srv/ann/b-docs" }],
          ["a-mail", { host: "imap.test", password: "pw" }],
        ]);
        expect(await r().insert(definition("ann", "b-docs", { path: "/elsewhere" }), 3)).toEqual({ added: false, taken: true });
        expect(await r().insert(definition("ann", "third"), 3)).toEqual({ added: true });
        expect(await r().insert(definition("ann", "fourth"), 3)).toEqual({ added: false, full: 3 });
        expect(await r().count("ann")).toBe(3);
        // Another user's are theirs alone.
        expect(await r().of("bea")).toEqual([]);
      });

      test("changed: label and config; a row gone is not brought back by a change", async () => {
        await r().insert(definition("cal", "docs"), 5);
        expect(await r().update({ ...definition("cal", "docs", { path: "/srv/cal/other" }), label: "Docs" })).toBe(true);
        expect(await r().of("cal")).toEqual([{ ...definition("cal", "docs", { path: "/srv/cal/other" }), label: "Docs" }]);
        await r().delete("cal", "docs");
        expect(await r().update(definition("cal", "docs"))).toBe(false);
        expect(await r().of("cal")).toEqual([]);
      });

      test("a grant is kept only while its connector stands (the operator's always), and goes with it", async () => {
        await r().insert(definition("dee", "mail"), 5);
        expect(await r().setGrant("dee", "mail", { refresh_token: "r1" })).toBe(true);
        expect(await r().setGrant("dee", "mail", { refresh_token: "r2" })).toBe(true);
        expect(await r().grant("dee", "mail")).toEqual({ refresh_token: "r2" });
        expect(await r().setGrant("dee", "gone", { refresh_token: "r" })).toBe(false);
        expect(await r().grant("dee", "gone")).toBeUndefined();
        await r().delete("dee", "mail");
        expect(await r().grant("dee", "mail")).toBeUndefined();
        expect(await store().rows.records.rowsOf("dee")).toBe(0);
        // The operator's connectors have no row: their grants are kept, and dropped when gone from the file.
        expect(await r().setGrant(OPERATOR_OWNER, "shared", { refresh_token: "o1" })).toBe(true);
        expect(await r().setGrant(OPERATOR_OWNER, "old", { refresh_token: "o2" })).toBe(true);
        expect(await r().dropGrantsExcept(OPERATOR_OWNER, ["shared"])).toBe(1);
        expect(await r().grant(OPERATOR_OWNER, "shared")).toEqual({ refresh_token: "o1" });
        expect(await r().grant(OPERATOR_OWNER, "old")).toBeUndefined();
      });

      test("every user's connectors by kind, without opening a config", async () => {
        await r().insert(definition("eve", "docs"), 5);
        await r().insert({ ...definition("eve", "db", { url: "postgres://x" }), kind: "sql" } as never, 5);
        const everyOne = await r().everyOne();
        expect(everyOne).toContainEqual({ user_id: "eve", id: "docs", kind: "files" });
        expect(everyOne).toContainEqual({ user_id: "eve", id: "db", kind: "sql" });
        const files = await r().idsOfKinds(["files"]);
        expect(files).toContainEqual({ user_id: "eve", id: "docs" });
        expect(files).not.toContainEqual({ user_id: "eve", id: "db" });
      });

      test("a user's rows and grants counted and erased (their data deleted), no other's", async () => {
        await r().insert(definition("fay", "one"), 5);
        await r().insert(definition("fay", "two"), 5);
        await r().setGrant("fay", "two", { refresh_token: "r" });
        await r().insert(definition("gus", "one"), 5);
        const records = store().rows.records;
        expect(await records.rowsOf("fay")).toBe(3);
        expect((await records.idsOf("fay")).sort()).toEqual(["one", "two"]);
        expect(await records.deleteUser("fay")).toBe(2);
        expect(await records.rowsOf("fay")).toBe(0);
        expect(await records.rowsOf("gus")).toBe(1);
      });
    },
  );
}

suite("embedded (SQLite)", async (keys) => {
  const db = new Database(":memory:");
  migrate(db, connectorRowMigrations);
  return { rows: new ConnectorRows(new SqliteConnectorRecords(db), keys), close: async () => db.close() };
});

suite("shared (PostgreSQL)", async (keys) => {
  const shared = await sharedDatabase();
  return { rows: new ConnectorRows(new PostgresConnectorRecords(shared.client()), keys), close: () => shared.drop() };
});

/** A maildir of one message saying `body`, under `root`/`user`/`name`. */
function maildir(root: string, name: string, body: string, user = "ann"): string {
  const dir = join(root, user, name);
  mkdirSync(join(dir, "cur"), { recursive: true });
  writeFileSync(
    join(dir, "cur", "1.x:2,S"),
    `Message-ID: <1@example.com>\r\nFrom: jo@example.com\r\nDate: Tue, 12 Jun 2001 10:00:00 +0000\r\nSubject: ${body}\r\n\r\n${body}\r\n`,
  );
  return dir;
}

describe("PostgreSQL alone: two nodes on one database", () => {
  let db: SharedDatabase;
  const keys = userKeys();
  const roots = tempDir("corpus-pg-connectors-");
  const config = testConfig({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}"), CORPUS_MAX_CONNECTORS_PER_USER: "4" });
  const quiet = createLogger("ERROR", { write() {} } as never);
  const registries: ConnectorRegistry[] = [];
  /** A node: its own connections to the shared database, its own embedded database (the local index stays per node here). */
  const node = () => {
    const registry = new ConnectorRegistry({
      db: openDatabase(tempDir(), MIGRATIONS),
      keys,
      config,
      log: quiet,
      records: new PostgresConnectorRecords(db.client()),
    });
    registries.push(registry);
    return registry;
  };
  let a: ConnectorRegistry;
  let b: ConnectorRegistry;
  beforeAll(async () => {
    db = await sharedDatabase();
    a = node();
    b = node();
  });
  afterAll(async () => {
    await Promise.all(registries.map((r) => r.close()));
    await db.drop();
  });

  /** The records `registry` finds for `word` in `id` (read afresh). */
  const found = async (registry: ConnectorRegistry, id: string, word: string) => {
    const [active] = await registry.active("ann", [id]);
    await (active!.connector as unknown as { sync(): Promise<void> }).sync();
    return (await active!.connector.search({ terms: [word], phrases: [], limit: 5 })).length;
  };

  test("added on B: listed and searched from A at once; changed on A: B lists and searches the new folder; removed on A: gone on B", async () => {
    const harbour = maildir(roots, "harbour", "harbour audit");
    const pier = maildir(roots, "pier", "pier closed");
    await b.add("ann", { id: "mail", kind: "maildir", config: { path: harbour } } as never);
    expect((await a.list("ann")).map((c) => [c.id, c.owner])).toEqual([["mail", "user"]]);
    expect(await found(a, "mail", "harbour")).toBe(1);
    expect(await found(b, "mail", "harbour")).toBe(1);
    // Re-pointed on A: B's running instance (the old folder's) is stopped, the new folder read.
    await a.update("ann", "mail", { label: "Pier", config: { path: pier } } as never);
    expect((await b.list("ann")).map((c) => [c.label, (c.config as { path: string }).path])).toEqual([["Pier", pier]]);
    expect(await found(b, "mail", "pier")).toBe(1);
    expect(await found(b, "mail", "harbour")).toBe(0);
    // Removed on A: B lists none, searches none, keeps no instance of it running.
    await a.remove("ann", "mail");
    expect(await b.list("ann")).toEqual([]);
    await expect(b.active("ann", ["mail"])).rejects.toThrow("unknown connector id mail");
    // Stopped in the background: its close and index drop awaited here.
    await (b as unknown as { forgetting: Map<string, Promise<void>> }).forgetting.get("ann/mail");
    expect([...(b as unknown as { live: Map<string, unknown> }).live.keys()]).toEqual([]);
    expect(await b.rowsOf("ann")).toBe(0);
  });

  test("two nodes adding at once: one connector per id, and no more than CORPUS_MAX_CONNECTORS_PER_USER in all", async () => {
    const folders = Array.from({ length: 12 }, (_, i) => maildir(roots, `f${i}`, `word${i}`, "cap"));
    const outcomes = await Promise.allSettled(
      folders.map((path, i) => (i % 2 ? a : b).add("cap", { id: `c${i % 6}`, kind: "maildir", config: { path } } as never)),
    );
    const refused = outcomes.flatMap((o) => (o.status === "rejected" ? [(o.reason as Error).message] : []));
    expect(outcomes.length - refused.length).toBe(4);
    for (const why of refused) expect(why).toMatch(/already exists|the most allowed \(CORPUS_MAX_CONNECTORS_PER_USER=4\)/);
    expect(await a.ids("cap")).toHaveLength(4);
    expect(await b.ids("cap")).toHaveLength(4);
    // The rows alone, many inserts of other ids at once on two nodes' connections: the cap still holds.
    const nodes = [db.client(), db.client()].map((c) => new ConnectorRows(new PostgresConnectorRecords(c), keys));
    const inserted = await Promise.all(Array.from({ length: 16 }, (_, i) => nodes[i % 2]!.insert(definition("cap2", `c${i}`), 4)));
    expect(inserted.filter((o) => o.added)).toHaveLength(4);
    expect(await nodes[0]!.count("cap2")).toBe(4);
  });

  test("a grant kept on B while A removes its connector: never a grant left without its connector", async () => {
    const onA = new ConnectorRows(new PostgresConnectorRecords(db.client()), keys);
    const onB = new ConnectorRows(new PostgresConnectorRecords(db.client()), keys);
    for (let round = 0; round < 20; round++) {
      await onA.insert(definition("jan", "mail"), 4);
      const [kept] = await Promise.all([onB.setGrant("jan", "mail", { refresh_token: `r${round}` }), onA.delete("jan", "mail")]);
      expect([round, kept, await onA.records.rowsOf("jan")]).toEqual([round, kept, 0]);
    }
  });

  test("the deletion's transaction: rolled back, nothing is lost; committed, nothing of the user is left", async () => {
    const records = new PostgresConnectorRecords(db.client());
    const rows = new ConnectorRows(records, keys);
    await rows.insert(definition("hal", "docs"), 4);
    await rows.setGrant("hal", "docs", { refresh_token: "r" });
    await erasedInDeletion(
      db.sql,
      {
        erase: async (tx) => expect(await records.within(tx).deleteUser("hal")).toBe(1),
        rowsIn: async (tx) => records.within(tx).rowsOf("hal"),
        rows: async () => records.rowsOf("hal"),
      },
      2,
    );
    expect(await a.list("hal")).toEqual([]);
  });

  test("a dump of the database spells no password, token or path of a connector: configs and grants are sealed", async () => {
    const secrets = ["hunter2zq", "postgres-pw-7731", "refresh-tok-5521", "/srv/ivy/secret-folder"];
    const rows = new ConnectorRows(new PostgresConnectorRecords(db.client()), keys);
    await rows.insert(definition("ivy", "mail", { host: "imap.test", user: "ivy", password: secrets[0] }), 4);
    await rows.insert({ ...definition("ivy", "db", { url: `postgres://ivy:${secrets[1]}@db.test/x` }), kind: "sql" } as never, 4);
    await rows.insert(definition("ivy", "docs", { path: secrets[3] }), 4);
    await rows.setGrant("ivy", "mail", { refresh_token: secrets[2] });
    const dump = spawnSync("pg_dump", ["--data-only", "--no-owner", db.database.url], { encoding: "utf8", maxBuffer: 64 << 20 });
    expect(dump.status).toBe(0);
    expect(dump.stdout).toContain(CONNECTOR_TABLES.connectors);
    expect(dump.stdout).toContain(CONNECTOR_TABLES.grants);
    expect(dump.stdout).toContain("ivy");
    for (const secret of secrets) {
      expect(dump.stdout).not.toContain(secret);
      expect(dump.stdout).not.toContain(Buffer.from(secret).toString("hex"));
    }
    expect((await rows.of("ivy")).find((d) => d.id === "mail")!.config).toMatchObject({ password: secrets[0] });
  });
});
