// D29 in-process: a write refused for want of room (a real full tmpfs, or a database that may not
// grow past max_page_count: a real SQLITE_FULL either way) answers 507 insufficient_storage on REST and an isError result with
// the same words on MCP; the OpenAPI document lists 507; a folder connector that cannot write says
// `error` with the reason and resumes by itself on an injected clock; the floor of free space and
// the reserve file (DiskSpace) behave as documented; archive vectors a full disk refused are retried
// until stored.

import type { Database } from "bun:sqlite";
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { filesSource } from "../../src/connectors/files/connector";
import { IndexedFolderConnector } from "../../src/connectors/indexed-source";
import { EmbeddedIndex, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { beginRequest } from "../../src/http/request-context";
import { BackgroundGuard } from "../../src/jobs/guard";
import { createLogger, memorySink } from "../../src/log";
import { createServices } from "../../src/services";
import { openDatabase } from "../../src/store/database";
import { DiskSpace, RESERVE_FILE } from "../../src/store/disk-space";
import { INDEXING_PAUSED_FULL, isStorageError, STORAGE_FULL_MESSAGE } from "../../src/store/storage-errors";
import { bearer, postJson, req, tempDir, testApp, testConfig } from "../helpers";
import { fillDisk, isRoot, mountTmpfs, skipNotice } from "../support/tmpfs";
import { until } from "../support/wait";

// The embedding model loads for the first question: seconds on a busy machine.
setDefaultTimeout(120_000);

skipNotice("storage-errors.test.ts (the app on a full disk)");

/** The database refuses to grow from now on (SQLITE_FULL), until `roomy`. */
const full = (db: Database) => {
  const { page_count } = db.query<{ page_count: number }, []>("PRAGMA page_count").get()!;
  db.exec(`PRAGMA max_page_count = ${page_count}`);
};
const roomy = (db: Database) => db.exec("PRAGMA max_page_count = 1073741823");

describe("isStorageError", () => {
  test("SQLITE_FULL, SQLITE_IOERR*, ENOSPC, EIO and a wrapped one; nothing else", () => {
    for (const code of ["SQLITE_FULL", "SQLITE_IOERR", "SQLITE_IOERR_WRITE", "ENOSPC", "EIO", "EDQUOT"])
      expect(isStorageError(Object.assign(new Error("x"), { code }))).toBe(true);
    expect(isStorageError(new Error("wrapped", { cause: Object.assign(new Error("x"), { code: "ENOSPC" }) }))).toBe(true);
    for (const e of [
      new Error("database or disk is full"),
      Object.assign(new Error("x"), { code: "SQLITE_CONSTRAINT" }),
      "SQLITE_FULL",
      null,
    ])
      expect(isStorageError(e)).toBe(false);
  });
});

describe.skipIf(!isRoot)("a write refused on a full disk, through the app", () => {
  test("REST 507 insufficient_storage, MCP isError with the same words; GET / and reads go on; back to 200 once there is room", async () => {
    const mnt = tempDir("corpus-full-app-");
    const tmpfs = mountTmpfs(mnt, 16 * 1024 * 1024);
    try {
      const t = await testApp({
        CORPUS_DATA_DIR: join(mnt, "data"),
        CORPUS_MIN_FREE_BYTES: "0",
        CORPUS_LIMIT_QUERY_PER_MINUTE: "1000",
        CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE: "1000",
      });
      const token = (await t.services.auth.issuer.issue("alice", ["corpus:search", "connectors:read", "connectors:write"] as never)).token;
      const ask = () => t.app.handle(postJson("/v1/query", { query: "quarterly invoice" }, bearer(token)));
      expect((await ask()).status).toBe(200);

      // An empty WAL on a full disk: the next write must grow it, and cannot.
      t.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      fillDisk(join(mnt, "filler"));
      const refused = await ask();
      expect(refused.status).toBe(507);
      expect(await refused.json()).toEqual({ type: "insufficient_storage", message: STORAGE_FULL_MESSAGE });

      const mcpRequest = req("/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...bearer(token) },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "corpus_search", arguments: { query: "quarterly invoice" } },
        }),
      });
      beginRequest(mcpRequest, "192.0.2.1");
      const rpc = (await (await t.app.handle(mcpRequest)).json()) as any;
      expect(rpc.result).toEqual({ content: [{ type: "text", text: `Insufficient storage: ${STORAGE_FULL_MESSAGE}` }], isError: true });

      expect((await t.app.handle(req("/"))).status).toBe(200);
      expect((await t.app.handle(req("/v1/connectors", { headers: bearer(token) }))).status).toBe(200);
      const logged = JSON.stringify(t.logs.records());
      expect(logged).toContain("write refused: storage full");
      expect(logged).not.toContain("unhandled error");

      rmSync(join(mnt, "filler"));
      expect((await ask()).status).toBe(200);
      await t.services.close();
    } finally {
      tmpfs.unmount();
    }
  });
});

describe("the OpenAPI document", () => {
  test("the OpenAPI document lists 507 on the routes that write", async () => {
    const t = await testApp();
    const doc = (await (await t.app.handle(req("/openapi/json"))).json()) as any;
    for (const [path, method] of [
      ["/v1/query", "post"],
      ["/v1/deep_search", "post"],
      ["/v1/delete_my_data", "delete"],
      ["/v1/connectors", "post"],
      ["/v1/webhooks", "post"],
    ] as const) {
      expect(Object.keys(doc.paths[path][method].responses)).toContain("507");
    }
    await t.services.close();
  });
});

describe("a folder connector that cannot write", () => {
  const db = openDatabase(tempDir(), [...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(db, randomBytes(32));

  function folder(n: number): string {
    const dir = tempDir("corpus-full-folder-");
    for (let i = 0; i < n; i++) writeFileSync(join(dir, `note-${i}.txt`), `Note ${i}\n\nmeadowlark ${"filler ".repeat(200)}${i}`);
    return dir;
  }

  test("says error with the reason while it cannot write, retries with backoff on the injected clock, resumes without a restart", async () => {
    const dir = folder(5);
    const waiting: Array<{ fn: () => void; ms: number }> = [];
    const reports: Array<unknown> = [];
    const logs = memorySink();
    full(db);
    const c = new IndexedFolderConnector(
      "files",
      dir,
      new EmbeddedIndex(db, "t/full", indexKeysFor(keys, "alice", "t/full", true)),
      filesSource(dir),
      {
        schedule: (fn, ms) => waiting.push({ fn, ms }),
        report: (e) => reports.push(e),
        log: createLogger("INFO", logs.sink),
      },
    );
    await c.sync();
    // What fitted in the free pages is kept; the rest waits.
    expect(await c.health()).toMatchObject({ status: "error", reason: INDEXING_PAUSED_FULL });
    expect(waiting.map((w) => w.ms)).toEqual([1_000]);
    expect(isStorageError(reports.at(-1))).toBe(true);
    // Still full at the first retry: the next one waits longer.
    waiting.shift()!.fn();
    await c.sync();
    expect(waiting.map((w) => w.ms)).toEqual([2_000]);
    expect((await c.health()).status).toBe("error");

    roomy(db);
    waiting.shift()!.fn();
    await c.sync();
    expect(await c.health()).toMatchObject({ status: "ok", records: 5 });
    expect(reports.at(-1)).toBeUndefined();
    expect(waiting).toEqual([]);
    expect((await c.search({ terms: ["meadowlark"], phrases: [], limit: 10 })).length).toBe(5);
    await c.close();
  });

  test("below the floor of free space no new indexing starts; what is indexed is still searched", async () => {
    const dir = folder(2);
    let low: string | undefined;
    const waiting: Array<() => void> = [];
    const c = new IndexedFolderConnector(
      "files",
      dir,
      new EmbeddedIndex(db, "t/low", indexKeysFor(keys, "alice", "t/low", true)),
      filesSource(dir),
      {
        space: { lowReason: () => low },
        schedule: (fn) => waiting.push(fn),
      },
    );
    await c.sync();
    expect((await c.health()).status).toBe("ok");
    low = "nearly full";
    writeFileSync(join(dir, "late.txt"), "Late\n\nmeadowlark late");
    await c.sync();
    expect(await c.health()).toEqual({ status: "error", reason: "nearly full", records: 2 });
    expect((await c.search({ terms: ["meadowlark"], phrases: [], limit: 10 })).length).toBe(2);
    low = undefined;
    waiting.shift()!();
    await c.sync();
    expect(await c.health()).toMatchObject({ status: "ok", records: 3 });
    await c.close();
  });
});

describe("attack: the first scan after an upgrade rewrites the index's words (TERMS_FORMAT) on a full disk", () => {
  test("the rewrite cannot write: the status says so, and what is indexed is still searched (D29)", async () => {
    const db = openDatabase(tempDir(), [...cryptoMigrations, ...indexMigrations]);
    const keys = new UserKeys(db, randomBytes(32));
    const dir = tempDir("corpus-full-upgrade-");
    for (let i = 0; i < 60; i++) writeFileSync(join(dir, `note-${i}.txt`), `Note ${i}\n\nmeadowlark ${"filler ".repeat(200)}${i}`);
    const open = (schedule: (fn: () => void, ms: number) => void) =>
      new IndexedFolderConnector(
        "files",
        dir,
        new EmbeddedIndex(db, "t/upgrade", indexKeysFor(keys, "alice", "t/upgrade", true)),
        filesSource(dir),
        {
          schedule,
        },
      );
    // The previous version indexed the folder (its words, all ASCII, are the same in both formats).
    const before = open(() => {});
    await before.sync();
    await before.close();
    db.query("UPDATE connector_docs SET terms_format = 1").run();
    // The upgraded server starts on a full disk: its first scan reads nothing, and rewrites the words.
    full(db);
    const waiting: Array<() => void> = [];
    const c = open((fn) => waiting.push(fn));
    await c.sync();
    expect(await c.health()).toMatchObject({ status: "error", reason: INDEXING_PAUSED_FULL, records: 60 });
    // Every record is there, its words found as before the upgrade: a question is answered from them.
    let found: number | string;
    try {
      found = (await c.search({ terms: ["meadowlark"], phrases: [], limit: 100 })).length;
    } catch (error) {
      found = String(error);
    }
    expect(found).toBe(60);
    roomy(db);
    waiting.shift()?.();
    await c.sync();
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM connector_docs WHERE terms_format < 2").get()!.n).toBe(0);
    await c.close();
  });
});

describe("DiskSpace: the floor and the reserve", () => {
  const MIN = 4 * 1024 * 1024;
  function setup(free: { bytes: number }) {
    const dir = tempDir("corpus-disk-space-");
    const logs = memorySink();
    const disk = new DiskSpace(dir, MIN, createLogger("INFO", logs.sink), () => free.bytes);
    return { dir, disk, logs };
  }

  test("the reserve (a quarter of the floor) is made only with room for it above the floor; released on demand; made again once space is back", () => {
    const free = { bytes: MIN };
    const { dir, disk, logs } = setup(free);
    disk.check();
    expect(existsSync(join(dir, RESERVE_FILE))).toBe(false);
    free.bytes = 100 * MIN;
    disk.check();
    expect(statSync(join(dir, RESERVE_FILE)).size).toBe(MIN / 4);
    expect(disk.releaseReserve()).toBe(true);
    expect(existsSync(join(dir, RESERVE_FILE))).toBe(false);
    expect(disk.releaseReserve()).toBe(false);
    free.bytes = 10;
    disk.check();
    expect(disk.lowReason()).toContain("CORPUS_MIN_FREE_BYTES");
    free.bytes = 100 * MIN;
    disk.check();
    expect(disk.hasReserve()).toBe(true);
    const messages = logs.records().map((r) => r.message);
    expect(messages.filter((m) => m === "free space below CORPUS_MIN_FREE_BYTES: no new indexing until space is freed")).toHaveLength(1);
    expect(messages).toContain("free space back above CORPUS_MIN_FREE_BYTES");
  });

  test("withReserve: a write refused for want of room is tried once more after the reserve is freed; other errors pass through", () => {
    const free = { bytes: 100 * MIN };
    const { disk } = setup(free);
    disk.ensureReserve();
    let tries = 0;
    const result = disk.withReserve(() => {
      if (tries++ === 0) throw Object.assign(new Error("full"), { code: "SQLITE_FULL" });
      return "deleted";
    });
    expect(result).toBe("deleted");
    expect(tries).toBe(2);
    expect(disk.hasReserve()).toBe(false);
    // No reserve left: the refusal reaches the caller.
    expect(() =>
      disk.withReserve(() => {
        throw Object.assign(new Error("full"), { code: "SQLITE_FULL" });
      }),
    ).toThrow("full");
    expect(() =>
      disk.withReserve(() => {
        throw new Error("other");
      }),
    ).toThrow("other");
  });

  test("CORPUS_MIN_FREE_BYTES=0 turns the floor and the reserve off", () => {
    const dir = tempDir("corpus-disk-space-");
    mkdirSync(dir, { recursive: true });
    const disk = new DiskSpace(
      dir,
      0,
      createLogger("INFO", () => {}),
      () => 0,
    );
    disk.check();
    expect(disk.lowReason()).toBeUndefined();
    expect(existsSync(join(dir, RESERVE_FILE))).toBe(false);
  });
});

describe.skipIf(!isRoot)("archive vectors on a full disk", () => {
  test("vectors a full disk kept from being stored are retried with backoff on the injected clock until stored", async () => {
    const mnt = tempDir("corpus-full-archive-");
    const tmpfs = mountTmpfs(mnt, 16 * 1024 * 1024);
    const waiting: Array<{ fn: () => void; ms: number }> = [];
    const scheduled = Promise.withResolvers<void>();
    const logs = memorySink();
    const log = createLogger("INFO", logs.sink);
    const services = await createServices(
      testConfig({ CORPUS_DATA_DIR: join(mnt, "data"), CORPUS_MIN_FREE_BYTES: "0" }),
      log,
      Date.now,
      new BackgroundGuard(log, (fn, ms) => {
        waiting.push({ fn, ms });
        scheduled.resolve();
      }),
    );
    try {
      // The answer's vector is computed in the background: held until the disk is full.
      const embed = services.embeddings.embed.bind(services.embeddings);
      const { promise: held, resolve: release } = Promise.withResolvers<void>();
      services.embeddings.embed = async (...args) => (await held, embed(...args));
      const chunk = {
        chunk_id: "c1",
        connector: "docs",
        title: "Harbour audit",
        content: "pallets arrived on day four",
        source_url: "file:///x",
        type: "file" as const,
        path: "x",
        date: null,
      };
      services.archive.store(
        "alice",
        "qry_1",
        "when did the pallets arrive",
        [{ chunk, embedText: "Harbour audit pallets arrived on day four" }],
        [undefined],
      );
      const pending = () => services.db.query<{ n: number }, []>("SELECT count(*) AS n FROM archive_chunks WHERE embedded = 0").get()!.n;
      expect(pending()).toBe(1);

      services.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      fillDisk(join(mnt, "filler"));
      release();
      await scheduled.promise;
      expect(waiting.map((w) => w.ms)).toEqual([1_000]);
      expect(services.guard.storageFailing()).toEqual(["archive_vectors"]);
      expect(pending()).toBe(1);

      rmSync(join(mnt, "filler"));
      waiting.shift()!.fn();
      await until("the retried vector to be stored", () => (pending() === 0 ? true : undefined), 20_000);
      expect(services.guard.storageFailing()).toEqual([]);
      expect(waiting).toEqual([]);
      expect(logs.records().map((r) => r.message)).toContain("background job recovered");
    } finally {
      await services.close();
      tmpfs.unmount();
    }
  });
});
