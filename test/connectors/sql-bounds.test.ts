// Issue 13, attack report finding 2: a SQLite connector of 300,000 rows (68 MB) and a question of
// 450 words froze the whole server for 70 s, in one synchronous LIKE over 900 conditions. Now a
// search asks for at most MAX_SEARCH_NEEDLES needles, and SQLite is read in windows of the
// table's key with the event loop turning in between, within a budget and the search's signal.

import { Database } from "bun:sqlite";
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { SqlTable } from "../../src/connectors/sql/config";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { MAX_SEARCH_NEEDLES, searchNeedles } from "../../src/connectors/types";
import { MAX_QUERY_TERMS, planQuery } from "../../src/retrieval/plan";
import { cli, startCorpus, userFoldersEnv } from "../backup/support";
import { tempDir } from "../helpers";
import { FREE_SHARE, turnsWhile } from "../support/event-loop";
import { probeWhile } from "../support/responsiveness";

setDefaultTimeout(180_000);

/** A seeded generator: the same words and rows on every run. */
function random(seed: number) {
  let s = seed;
  return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0), s / 2 ** 32);
}

/** `n` distinct random 7-letter words (the attacker's question). */
function sevenLetterWords(n: number, next = random(7)): string[] {
  const out = new Set<string>();
  while (out.size < n) out.add(Array.from({ length: 7 }, () => String.fromCharCode(97 + Math.floor(next() * 26))).join(""));
  return [...out];
}

const ROWS = 300_000;
const question = sevenLetterWords(450);
const table: SqlTable = { name: "t", id: "id", title: "title", text: ["body"], date: "created" };

/** The attack report's database: 300,000 rows of 200 random characters, and two planted rows. */
function bigDatabase(): string {
  const dir = join(tempDir(), "alice", "db");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "big.db");
  const db = new Database(path);
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, title TEXT, body TEXT, created TEXT)");
  const next = random(11);
  const alphabet = "abcdefghijklmnopqrstuvwxyz ";
  const pool = Array.from({ length: 997 }, () => Array.from({ length: 200 }, () => alphabet[Math.floor(next() * 27)]).join(""));
  const insert = db.query("INSERT INTO t VALUES (?, ?, ?, ?)");
  db.transaction(() => {
    for (let i = 1; i <= ROWS; i++) {
      const body = i === 1 ? `the oldest row names ${question[0]}` : pool[i % pool.length]!;
      const title = i === ROWS - 10 ? `recent ${question[5]}` : `t${i}`;
      insert.run(i, title, body, `2020-01-01 00:00:${String(i % 60).padStart(2, "0")}`);
    }
  })();
  db.close();
  return path;
}

const path = bigDatabase();

describe("the attack report's SQLite: 300,000 rows and a 450-word question", () => {
  const c = new SqlConnector({ url: path, tables: [table] });
  /** How long the whole question took in this run: what a search given up is measured against. */
  let questionMs = 0;

  test("the thread keeps serving, the question costs what its needles cost, the planted row is found", async () => {
    expect(question.join(" ").length).toBeLessThan(4_000);
    const r = await turnsWhile(() => c.search({ terms: question, phrases: [], limit: 60 }));
    questionMs = r.ms;
    // Was one synchronous call of 70 s: the loop seen at ~none of its looks. Reading in windows,
    // at most of them, and no wait longer than a quarter of the whole.
    const seen = { share: r.share, longestMs: Math.round(r.longestMs), ms: Math.round(r.ms) };
    expect({ ...seen, free: r.share >= FREE_SHARE, neverLong: r.longestMs < r.ms / 4 }).toMatchObject({ free: true, neverLong: true });
    // The 450 words ask what the MAX_SEARCH_NEEDLES they are cut to ask, in this run (was 900
    // conditions per row): no longer than twice the search for those needles alone.
    const needles = searchNeedles({ terms: question, phrases: [], limit: 60 });
    const alone = await turnsWhile(() => c.search({ terms: needles, phrases: [], limit: 60 }));
    expect({ questionMs: Math.round(r.ms), needlesMs: Math.round(alone.ms), asMuch: r.ms < 2 * alone.ms }).toMatchObject({
      asMuch: true,
    });
    // Newest first: the recent row whatever the machine's speed; the oldest once the whole table is read in time.
    expect(r.value.map((x) => x.id)).toContain(`t/${ROWS - 10}`);
    expect(r.value.every((x) => x.id === `t/${ROWS - 10}` || x.id === "t/1")).toBe(true);
  });

  test("health counts the rows window by window", async () => {
    const r = await turnsWhile(() => c.health());
    expect(r.value).toEqual({ status: "ok", records: ROWS });
    expect({ share: r.share, ms: Math.round(r.ms), free: r.share >= FREE_SHARE }).toMatchObject({ free: true });
  });

  test("a search the caller gave up on stops reading", async () => {
    expect(questionMs).toBeGreaterThan(0);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const r = await turnsWhile(() => c.search({ terms: question, phrases: [], limit: 60, signal: controller.signal }));
    // Against the same question let run to its end in this run (a busy machine slows both).
    expect({ gaveUpMs: Math.round(r.ms), questionMs: Math.round(questionMs), atOnce: r.ms < questionMs / 2 }).toMatchObject({
      atOnce: true,
    });
  });

  test("a real server: GET / keeps answering while the question runs (it waited 69 s), and the question is answered", async () => {
    const root = join(path, "..", "..", "..");
    const env = {
      ...userFoldersEnv(root),
    };
    const token = (await cli(["token", "create", "--user", "alice", "--scopes", "connectors:write,corpus:search"], env)).stdout.trim();
    const server = await startCorpus(env);
    const post = (route: string, body: unknown) =>
      fetch(`${server.url}${route}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    try {
      expect((await post("/v1/connectors", { id: "big", kind: "sql", config: { url: path, tables: [table] } })).status).toBe(200);
      // The model loads with the first question: asked once before the timing.
      expect((await post("/v1/query", { query: "warm up", connectors: ["big"] })).status).toBe(200);
      let done = false;
      const started = performance.now();
      const asked = post("/v1/query", { query: question.join(" "), connectors: ["big"], max_results: 5 }).finally(() => (done = true));
      const probed = await probeWhile(server.url, server.proc.pid, () => done, { everyMs: 20 });
      const response = await asked;
      const askedMs = performance.now() - started;
      expect(response.status).toBe(200);
      const body = (await response.json()) as { notes?: string[] };
      expect(body.notes ?? []).not.toContainEqual(expect.stringContaining("big:"));
      expect(probed.failed).toBe(0);
      expect(probed.answered).toBeGreaterThan(5);
      // Against the question's own time, not a bound in ms (the machine may be shared and busy):
      // held, the server answered one GET / in the whole question (69 s), and that one last.
      const seen = { askedMs: Math.round(askedMs), slowestMs: Math.round(probed.slowestMs), answered: probed.answered };
      expect({
        ...seen,
        free: probed.answered / (askedMs / 20) >= FREE_SHARE,
        neverLong: probed.slowestMs < askedMs / 4,
      }).toMatchObject({ free: true, neverLong: true });
    } finally {
      await server.stop();
    }
  });
});

describe("windows read the same rows as one query", () => {
  /** A table of `n` rows with dates that tie, read through the connector and by one plain query. */
  function compare(create: string, n: number, tables: (name: string) => SqlTable) {
    const dir = tempDir();
    const file = join(dir, "w.db");
    const db = new Database(file);
    db.exec(create);
    const next = random(3);
    const insert = db.query("INSERT INTO w (k, title, body, created) VALUES (?, ?, ?, ?)");
    db.transaction(() => {
      for (let i = 0; i < n; i++)
        insert.run(
          `k${String(Math.floor(next() * 1e9)).padStart(9, "0")}-${i}`,
          `row ${i}`,
          next() < 0.3 ? "an invoice" : "a note",
          `2021-0${1 + (i % 9)}-01`,
        );
    })();
    const expected = db
      .query<{ k: string }, []>(
        "SELECT k FROM w WHERE (CAST(title AS TEXT) LIKE '%invoice%' OR CAST(body AS TEXT) LIKE '%invoice%') ORDER BY created DESC, k DESC LIMIT 40",
      )
      .all()
      .map((r) => `w/${r.k}`);
    db.close();
    return { connector: new SqlConnector({ url: file, tables: [tables("w")] }), expected };
  }
  const cols = (name: string): SqlTable => ({ name, id: "k", title: "title", text: ["body"], date: "created" });

  test("a WITHOUT ROWID table, by its primary key", async () => {
    const { connector, expected } = compare(
      "CREATE TABLE w (k TEXT PRIMARY KEY, title TEXT, body TEXT, created TEXT) WITHOUT ROWID",
      20_000,
      cols,
    );
    expect(expected).toHaveLength(40);
    expect((await connector.search({ terms: ["invoice"], phrases: [], limit: 40 })).map((r) => r.id)).toEqual(expected);
    expect(await connector.health()).toEqual({ status: "ok", records: 20_000 });
  });

  test("a table with a column named rowid, by _rowid_", async () => {
    const { connector, expected } = compare("CREATE TABLE w (rowid TEXT, k TEXT, title TEXT, body TEXT, created TEXT)", 20_000, cols);
    expect((await connector.search({ terms: ["invoice"], phrases: [], limit: 40 })).map((r) => r.id)).toEqual(expected);
  });

  test("a table that hides every name of its rowid is refused with a reason", async () => {
    const dir = tempDir();
    const file = join(dir, "x.db");
    const db = new Database(file);
    db.exec('CREATE TABLE w (rowid TEXT, "_rowid_" TEXT, oid TEXT, k TEXT, title TEXT, body TEXT, created TEXT)');
    db.close();
    const c = new SqlConnector({ url: file, tables: [cols("w")] });
    expect(await c.health()).toEqual({
      status: "error",
      reason: "table w has columns named rowid, _rowid_ and oid: it cannot be read in bounded steps",
    });
  });
});

describe("how many needles a source that matches substrings is asked for", () => {
  test("phrases first, then the longest terms, at most MAX_SEARCH_NEEDLES", () => {
    const picked = searchNeedles({
      terms: ["ab", "invoice", "acme", "december", "q4", "shipping", "warehouse", "berlin", "paid", "net", "overdue"],
      phrases: ["Late Fee"],
      limit: 5,
    });
    expect(picked).toEqual(["late fee", "warehouse", "december", "shipping", "invoice", "overdue", "berlin", "acme"]);
    expect(picked).toHaveLength(MAX_SEARCH_NEEDLES);
  });

  test("a question's terms and phrases stop at MAX_QUERY_TERMS; its addresses are kept", () => {
    const plan = planQuery(`${question.join(" ")} jeff@enron.com ${Array.from({ length: 40 }, (_, i) => `"phrase ${i}"`).join(" ")}`);
    expect(plan.terms).toHaveLength(MAX_QUERY_TERMS);
    expect(plan.terms.slice(0, 3)).toEqual(question.slice(0, 3));
    expect(plan.terms).toContain("jeff@enron.com");
    expect(plan.phrases).toHaveLength(MAX_QUERY_TERMS);
  });
});
