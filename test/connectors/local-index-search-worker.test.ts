// A question's SQL in a local index (BM25, the nearest chunks, the rows found) runs in the search
// worker, off the serving thread (D31: ~40% of a question's serving-thread time, measured): the
// same hits as on the asking thread, none of that SQL on the serving thread's connection, an
// answer still when the worker is ended mid-search.

import type { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { closeSearches, dropIndex, EmbeddedIndex, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
import { MAX_WAITING_SEARCHES, SEARCH_STUCK_MS, searchWorkerSettings } from "../../src/connectors/local-index/searcher";
import type { RetrievalRequest } from "../../src/connectors/types";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";
import { countingOpens, mailRecord } from "../support/local-index";
import { SLOW, WEDGED } from "../support/wedging-search-worker";

const mail = (id: string, date: string, content: string) => mailRecord(id, date, content, { from: "a@example.com" });

/** A unit vector along the first axis, turned towards the second by `turn`. */
function vector(turn: number): Float32Array {
  const v = new Float32Array(EMBEDDING_DIM);
  v[0] = Math.cos(turn);
  v[1] = Math.sin(turn);
  return v;
}

/** The serving thread's connection, counting the searches' statements it runs (FTS5 matches and sqlite-vec's nearest chunks). */
function counted(db: Database): { db: Database; searches: () => number } {
  let searches = 0;
  const proxy = new Proxy(db, {
    get(target, name) {
      if (name === "query")
        return (sql: string) => {
          if (/\bMATCH\b/.test(sql)) searches++;
          return target.query(sql);
        };
      const value = Reflect.get(target, name, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db: proxy, searches: () => searches };
}

/** An index of 60 mails over two years, every chunk with a vector; its keys count the records opened. */
async function mailIndex() {
  const real = openDatabase(tempDir(), [...cryptoMigrations, ...indexMigrations]);
  const { db, searches } = counted(real);
  const { keys, opened } = countingOpens(indexKeysFor(new UserKeys(real, randomBytes(32)), "alice", "mail", true));
  const index = new EmbeddedIndex(db, "alice/mail", keys, (r) => [r.content]);
  for (let i = 0; i < 60; i++)
    await index.put({ source: `m${i}`, size: 1, mtime: 1 }, [
      mail(
        `m${i}`,
        i % 2 ? "2001-06-12T10:00:00.000Z" : "2020-03-01T10:00:00.000Z",
        `harbour audit ${"report ".repeat(i % 7)} number ${i}`,
      ),
    ]);
  const pending = index.pendingChunks(1000);
  index.setVectors(
    pending,
    pending.map((_, i) => vector(i / 60)),
  );
  // The connection the index was given: its search worker is that connection's.
  return { db, index, searches, opened };
}

const asked = (extra: Partial<RetrievalRequest> = {}): RetrievalRequest => ({
  terms: ["harbour", "report"],
  phrases: [],
  limit: 10,
  vector: vector(0.3),
  ...extra,
});

const june2001 = { dateFrom: new Date("2001-06-01T00:00:00Z"), dateTo: new Date("2001-07-01T00:00:00Z") };

test("attack: a question's searches do not run on the serving thread; the worker finds the same hits, scores and order as this thread", async () => {
  const { db, index, searches } = await mailIndex();
  try {
    for (const request of [
      asked(),
      asked(june2001),
      asked({ terms: ["zebra"] }),
      asked({ vector: undefined }),
      asked({ phrases: ["harbour audit"] }),
    ]) {
      const before = searches();
      const off = await index.rank(request);
      expect(searches()).toBe(before);
      const here = index.rankHere(request);
      expect(searches()).toBeGreaterThan(before);
      expect(off.length).toBeGreaterThan(0);
      const shown = (hits: typeof off) => hits.map((h) => [h.record.id, h.lexical, h.dense, h.chunk]);
      expect(shown(off)).toEqual(shown(here));
    }
  } finally {
    await closeSearches(db);
  }
});

test("a worker ended while it searches: the question is answered on this thread; the next starts another worker", async () => {
  const { db, index, searches } = await mailIndex();
  try {
    const expected = index.rankHere(asked()).map((h) => h.record.id);
    const before = searches();
    const searching = index.rank(asked());
    await closeSearches(db);
    expect((await searching).map((h) => h.record.id)).toEqual(expected);
    expect(searches()).toBeGreaterThan(before);
    const after = searches();
    expect((await index.rank(asked())).map((h) => h.record.id)).toEqual(expected);
    expect(searches()).toBe(after);
  } finally {
    await closeSearches(db);
  }
});

test("the rows the worker read are opened here, each once per version of its row (opened-records.test.ts)", async () => {
  const { db, index, opened } = await mailIndex();
  try {
    // Setting the vectors opened each record to cut its chunks.
    const before = opened();
    const first = await index.rank(asked());
    const once = opened();
    expect(once - before).toBe(first.length);
    expect((await index.rank(asked())).map((h) => h.record.id)).toEqual(first.map((h) => h.record.id));
    expect(opened()).toBe(once);
    // A record written again (its file changed) is its new version at once.
    const top = first[0]!.record.id;
    await index.put({ source: top, size: 2, mtime: 2 }, [mail(top, "2020-03-01T10:00:00.000Z", "harbour report harbour report, revised")]);
    const revised = (await index.rank(asked())).find((h) => h.record.id === top);
    expect(revised?.record.content).toBe("harbour report harbour report, revised");
  } finally {
    await closeSearches(db);
  }
});

test("attack: an index dropped (its connector removed, D25) after the worker read its rows: none of its records are answered", async () => {
  const { db, index } = await mailIndex();
  try {
    expect((await index.rank(asked())).length).toBeGreaterThan(0);
    const searching = index.rank(asked());
    // This thread busy while the worker searches and replies: its reply waits, then the index goes.
    Bun.sleepSync(50);
    expect(dropIndex(db, "alice/mail")).toBeGreaterThan(0);
    expect(await searching).toEqual([]);
  } finally {
    await closeSearches(db);
  }
});

test("attack: questions past MAX_WAITING_SEARCHES waiting on the worker are searched on this thread, not queued without bound", async () => {
  const { db, index, searches } = await mailIndex();
  try {
    const expected = index.rankHere(asked()).map((h) => h.record.id);
    const before = searches();
    index.rankHere(asked());
    const perSearch = searches() - before;
    const over = 5;
    const start = searches();
    const all = Array.from({ length: MAX_WAITING_SEARCHES + over }, () => index.rank(asked()));
    for (const hits of await Promise.all(all)) expect(hits.map((h) => h.record.id)).toEqual(expected);
    expect(searches() - start).toBe(over * perSearch);
  } finally {
    await closeSearches(db);
  }
});

test("attack: a search the worker never answers (wedged) is answered on this thread after the stuck wait; the worker is ended, and a question after the retry wait starts another", async () => {
  const { db, index, searches } = await mailIndex();
  const saved = { ...searchWorkerSettings };
  searchWorkerSettings.entry = join(import.meta.dir, "../support/wedging-search-worker.ts");
  // The retry wait is set, not waited out: long while it must hold, none once it is over (a
  // loaded machine can take longer than any short wait between two questions).
  searchWorkerSettings.retryMs = 60_000;
  const wedge = join(dirname(db.filename), WEDGED);
  const ids = (hits: Awaited<ReturnType<typeof index.rank>>) => hits.map((h) => h.record.id);
  try {
    const expected = ids(index.rankHere(asked()));
    let before = searches();
    expect(ids(await index.rank(asked()))).toEqual(expected);
    expect(searches()).toBe(before);
    // Wedged: without the stuck wait, this question would wait for ever.
    writeFileSync(wedge, "");
    searchWorkerSettings.stuckMs = 300;
    before = searches();
    expect(ids(await index.rank(asked()))).toEqual(expected);
    expect(searches()).toBeGreaterThan(before);
    // Until the retry wait is over, questions are searched here, not sent to a new worker.
    rmSync(wedge);
    searchWorkerSettings.stuckMs = SEARCH_STUCK_MS;
    before = searches();
    expect(ids(await index.rank(asked()))).toEqual(expected);
    expect(searches()).toBeGreaterThan(before);
    searchWorkerSettings.retryMs = 0;
    // Another worker answers (the wedged one, ended, would never have).
    before = searches();
    expect(ids(await index.rank(asked()))).toEqual(expected);
    expect(searches()).toBe(before);
  } finally {
    rmSync(wedge, { force: true });
    Object.assign(searchWorkerSettings, saved);
    await closeSearches(db);
  }
});

test("attack: a worker working through a queue longer than the stuck wait, answering within it each time, is not taken for a stuck one", async () => {
  const { db, index, searches } = await mailIndex();
  const saved = { ...searchWorkerSettings };
  searchWorkerSettings.entry = join(import.meta.dir, "../support/wedging-search-worker.ts");
  const slow = join(dirname(db.filename), SLOW);
  const ids = (hits: Awaited<ReturnType<typeof index.rank>>) => hits.map((h) => h.record.id);
  try {
    const expected = ids(index.rankHere(asked()));
    // Each search takes a third of the stuck wait: six queued take twice it in all.
    searchWorkerSettings.stuckMs = 1_800;
    writeFileSync(slow, "600");
    const before = searches();
    const all = await Promise.all(Array.from({ length: 6 }, () => index.rank(asked())));
    for (const hits of all) expect(ids(hits)).toEqual(expected);
    // All answered by the worker: none searched again on this thread after a worker taken for stuck.
    expect(searches()).toBe(before);
  } finally {
    rmSync(slow, { force: true });
    Object.assign(searchWorkerSettings, saved);
    await closeSearches(db);
  }
});

/** The objects a structured clone makes of `value` (a typed array one, its bytes not walked). */
function objectsIn(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  if (ArrayBuffer.isView(value)) return 1;
  return 1 + Object.values(value).reduce<number>((n, v) => n + objectsIn(v), 0);
}

test("attack: the worker's reply is two buffers handed over whatever the number of candidates, not objects and a row's buffer each to clone", async () => {
  const { db, index } = await mailIndex();
  const replies: unknown[] = [];
  const Real = globalThis.Worker;
  // Every reply the serving thread receives from a search worker started meanwhile.
  globalThis.Worker = class extends Real {
    override set onmessage(f: ((this: Worker, e: MessageEvent) => unknown) | null) {
      super.onmessage = f && ((e: MessageEvent) => (replies.push(e.data), f.call(this, e)));
    }
    override get onmessage() {
      return super.onmessage;
    }
  };
  try {
    const hits = await index.rank(asked());
    expect(hits.length).toBeGreaterThanOrEqual(10);
    expect(replies.length).toBe(1);
    // The message, its numbers and its rows: 3 objects for 10 candidates (today's: ~4 a candidate).
    expect(objectsIn(replies[0])).toBe(3);
    expect(index.rankHere(asked()).map((h) => [h.record.id, h.lexical, h.dense, h.chunk])).toEqual(
      hits.map((h) => [h.record.id, h.lexical, h.dense, h.chunk]),
    );
  } finally {
    globalThis.Worker = Real;
    await closeSearches(db);
  }
});

test("attack: the worker's kept phrase hits follow writes made on the serving thread's connection (put, removal, a put stopped half way, a dropped index)", async () => {
  const { db, index } = await mailIndex();
  try {
    const same = async (request: RetrievalRequest) => {
      const shown = (hits: Awaited<ReturnType<typeof index.rank>>) => hits.map((h) => [h.record.id, h.lexical, h.dense]);
      expect(shown(await index.rank(request))).toEqual(shown(index.rankHere(request)));
    };
    const requests = [asked({ vector: undefined }), asked({ vector: undefined, ...june2001 })];
    for (const r of requests) await same(r);
    await index.put({ source: "new", size: 1, mtime: 1 }, [mail("new", "2001-06-20T10:00:00.000Z", "harbour report report report")]);
    for (const r of requests) await same(r);
    expect((await index.rank(requests[1]!)).map((h) => h.record.id)).toContain("new");
    await index.removeSource(index.sourceKey("m3"));
    for (const r of requests) await same(r);
    // A put stopped after its first transaction: its records staged, hidden.
    let calls = 0;
    await index.put(
      { source: "m5", size: 9, mtime: 9 },
      Array.from({ length: 300 }, (_, i) => mail(`m5-${i}`, "2001-06-12T10:00:00.000Z", "harbour report staged")),
      undefined,
      () => ++calls > 1,
    );
    for (const r of requests) await same(r);
    dropIndex(db, index.owner);
    expect(await index.rank(requests[0]!)).toEqual([]);
  } finally {
    await closeSearches(db);
  }
});
