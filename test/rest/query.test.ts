// POST /v1/query and POST /v1/deep_search end to end: real connectors (a folder of Enron
// mail, the invoices folder, the Chinook shop), the real model, the real archive.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { NAMES_NOTHING } from "../../src/retrieval/search";
import { bearer, connectorsSettled, postJson, tempDir, testApp } from "../helpers";
import { chinookOperatorFile } from "../support/chinook";
import { SHARED_DATA } from "../support/servers";

setDefaultTimeout(120_000);

type App = Awaited<ReturnType<typeof testApp>>;
let t: App;
let token: string;
let roots: string;
const enron = join(SHARED_DATA, "enron", "messages");

beforeAll(async () => {
  roots = tempDir("corpus-q-roots-");
  const mail = join(roots, "mail");
  mkdirSync(mail);
  // A small mailbox: the messages about California's power market, and a few others (none over
  // 12 KB: a digest of 64 chunks would be most of the suite's embedding and tell these tests nothing more).
  const files = readdirSync(enron).sort();
  let n = 0;
  for (const f of files) {
    const raw = readFileSync(join(enron, f), "latin1");
    if (raw.length > 12_000) continue;
    if ((/California/.test(raw) && n < 24) || (n < 30 && /lunch|meeting/i.test(raw))) {
      cpSync(join(enron, f), join(mail, f));
      n++;
    }
  }
  const docs = join(roots, "docs");
  mkdirSync(docs);
  for (const f of ["AmazonWebServices.pdf", "Orlen.txt", "saeco.pdf", "QualityHosting.pdf"])
    cpSync(join(SHARED_DATA, "invoices", f), join(docs, f));
  writeFileSync(
    join(docs, "acme-march.md"),
    "# Acme invoice March 2026\n\nAcme Corp invoiced us 1,250.00 EUR on 2026-03-12 for consulting. Paid on 2026-03-30.\n",
  );
  const opFile = chinookOperatorFile();
  t = await testApp({ CORPUS_CONNECTOR_ROOTS: roots, CORPUS_CONNECTORS_FILE: opFile, CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1" });
  token = (await t.services.auth.issuer.issue("alice", ["corpus:search", "corpus:read", "connectors:read", "connectors:write"])).token;
  for (const body of [
    { id: "mail", kind: "maildir", label: "Enron mail", config: { path: mail } },
    { id: "docs", kind: "files", label: "Documents", config: { path: docs } },
  ]) {
    const r = await t.app.handle(postJson("/v1/connectors", body, bearer(token)));
    expect(r.status).toBe(200);
  }
  await connectorsSettled(t.services, "alice");
});

afterAll(async () => {
  await t.services.close();
});

const query = (body: unknown, tok = token) => t.app.handle(postJson("/v1/query", body, bearer(tok)));
const deep = (body: unknown, tok = token) => t.app.handle(postJson("/v1/deep_search", body, bearer(tok)));

describe("indexing progress", () => {
  test("is visible in GET /v1/connectors and in the logs", async () => {
    const list = ((await (await t.app.handle(new Request("http://localhost/v1/connectors", { headers: bearer(token) }))).json()) as any)
      .connectors;
    const mail = list.find((c: any) => c.id === "mail");
    expect(mail.indexed.chunks).toBeGreaterThan(0);
    expect(mail.indexed.embedded).toBe(mail.indexed.chunks);
    const lines = t.logs.records();
    expect(lines.some((l) => l.logger === "connectors.mail" && l.message === "connector indexed" && Number(l.records) > 0)).toBe(true);
    expect(
      lines.some((l) => l.logger === "connectors.mail" && l.message === "connector embedded" && l.embedded === mail.indexed.chunks),
    ).toBe(true);
  });
});

describe("POST /v1/query, shape B (query)", () => {
  test("results grouped per connector, ids and summary as specified", async () => {
    const r = await query({ query: "emails about the California power crisis and price caps" });
    expect(r.status).toBe(200);
    const body = (await r.json()) as any;
    expect(body.query_id).toMatch(/^qry_[A-Za-z0-9]+$/);
    expect(body.query).toBe("emails about the California power crisis and price caps");
    expect(body.search_summary).toMatchObject({ connectors_searched: 3 });
    expect(body.search_summary.total_chunks_found).toBeGreaterThanOrEqual(
      body.results.reduce((n: number, g: any) => n + g.chunks.length, 0),
    );
    expect(Number.isInteger(body.search_summary.duration_ms)).toBe(true);
    const mail = body.results.find((g: any) => g.connector === "mail");
    expect(mail.source_label).toBe("Enron mail");
    const top = mail.chunks[0];
    expect(top.chunk_id).toMatch(/^chnk_/);
    expect(top.content.toLowerCase()).toContain("california");
    expect(top.source_url).toStartWith("file://");
    expect(typeof top.relevance_score).toBe("number");
    expect(top.metadata).toMatchObject({ type: "email" });
    // D36: a citation carries its page, its document and the sha256 of the text it quotes.
    expect(top.metadata.sha256).toBe(createHash("sha256").update(top.content, "utf8").digest("hex"));
    expect(top.metadata.citation_url).toBe(`${t.config.resourceUrl}/d/${top.chunk_id}`);
    expect(top.metadata.document_id).toMatch(/^doc_[0-9a-f]{32}$/);
    // The best mail outranks every shop invoice for this question.
    const shop = body.results.find((g: any) => g.connector === "shop");
    expect(shop?.chunks[0].relevance_score ?? Number.NEGATIVE_INFINITY).toBeLessThan(top.relevance_score);
  });

  test("max_results bounds per connector: default 10, at most 100, 0 and 101 are 400", async () => {
    const body = (await (await query({ query: "invoice total", max_results: 2 })).json()) as any;
    for (const g of body.results) expect(g.chunks.length).toBeLessThanOrEqual(2);
    expect((await query({ query: "x", max_results: 100 })).status).toBe(200);
    for (const bad of [0, 101, 2.5]) {
      const r = await query({ query: "x", max_results: bad });
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).message).toStartWith("max_results: ");
    }
  });

  test("only the named connectors are searched; unknown ids are 400 listing the valid ones (D10)", async () => {
    const body = (await (await query({ query: "invoice", connectors: ["docs"] })).json()) as any;
    expect(body.search_summary.connectors_searched).toBe(1);
    expect(body.results.every((g: any) => g.connector === "docs")).toBe(true);
    const r = await query({ query: "invoice", connectors: ["nope"] });
    expect(r.status).toBe(400);
    expect(((await r.json()) as any).message).toBe("connectors: unknown connector id nope; valid ids: shop, mail, docs");
  });

  test("an empty question, or none, is 400; unknown fields are 400", async () => {
    for (const body of [{ query: "   " }, {}, { q: "" }, { query: "x", colour: "red" }]) {
      const r = await query(body);
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).type).toBe("bad_request");
    }
  });
});

describe("POST /v1/query, shape A (q)", () => {
  test("top_k results with chk_ ids, sources, snippets, scores, latency and token usage", async () => {
    const r = await query({ q: "Amazon Web Services invoice", top_k: 3 });
    const body = (await r.json()) as any;
    expect(Object.keys(body).sort()).toEqual(["latency_ms", "results", "usage"]);
    expect(body.results.length).toBeLessThanOrEqual(3);
    expect(body.results[0]).toMatchObject({ id: expect.stringMatching(/^chk_/), source: { type: "file", path: "AmazonWebServices.pdf" } });
    expect(body.results[0].snippet).toContain("Amazon Web Services");
    expect(body.usage.tokens).toBeGreaterThan(0);
    const scores = body.results.map((x: any) => x.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  test("filters: source_type, connectors, dates; unknown keys are 400", async () => {
    const mail = (await (await query({ q: "California", top_k: 8, filters: { source_type: "email" } })).json()) as any;
    expect(mail.results.length).toBeGreaterThan(0);
    for (const x of mail.results) {
      expect(x.source.type).toBe("email");
      expect(x.source.message_id).toMatch(/^<.+>$/);
    }
    const files = (await (await query({ q: "invoice", filters: { source_type: "file", connectors: ["docs"] } })).json()) as any;
    expect(files.results.every((x: any) => x.source.type === "file")).toBe(true);
    const bad = await query({ q: "x", filters: { colour: "red" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).message).toContain("colour");
    for (const d of ["2001-13-01", "yesterday", "2001-02-30"]) {
      const r = await query({ q: "x", filters: { date_from: d } });
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).message).toStartWith("filters.date_from: ");
    }
  });

  test("date filters include both edge days", async () => {
    // The Acme note is dated by its file time: today.
    const today = new Date().toISOString().slice(0, 10);
    const within = (await (
      await query({ q: "Acme consulting", filters: { connectors: ["docs"], date_from: today, date_to: today } })
    ).json()) as any;
    expect(within.results.map((x: any) => x.source.path)).toContain("acme-march.md");
    const before = (await (await query({ q: "Acme consulting", filters: { connectors: ["docs"], date_to: "2020-01-01" } })).json()) as any;
    expect(before.results.map((x: any) => x.source.path)).not.toContain("acme-march.md");
  });
});

describe("POST /v1/query, shape C (conversation_id)", () => {
  test("an extractive answer with [n] citations; a follow-up continues the conversation", async () => {
    const r = await query({ query: "How much did Acme invoice us in March?", conversation_id: null });
    const body = (await r.json()) as any;
    expect(body.conversation_id).toMatch(/^conv_/);
    expect(body.answer).toMatch(/\[1\]/);
    expect(body.answer).toContain("1,250.00 EUR");
    // D36 (before toMatchObject, which leaves its matchers in the object it was given)
    expect(body.sources[0].sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(body.sources[0].url).toBe(`${t.config.resourceUrl}/d/${body.sources[0].chunk_id}`);
    expect(body.sources[0]).toMatchObject({
      n: 1,
      chunk_id: expect.stringMatching(/^chnk_/),
      connector: "docs",
      title: "Acme invoice March 2026",
    });
    const follow = (await (await query({ query: "when was it paid?", conversation_id: body.conversation_id })).json()) as any;
    expect(follow.conversation_id).toBe(body.conversation_id);
    expect(follow.sources[0].title).toBe("Acme invoice March 2026");
    const bob = (await t.services.auth.issuer.issue("bob", ["corpus:search"])).token;
    const stolen = await query({ query: "again", conversation_id: body.conversation_id }, bob);
    expect(stolen.status).toBe(404);
  });
});

describe("a question that names nothing to search for (outside attack)", () => {
  test("'How much?' is answered with no source, not with the shop's newest invoice; the note says why", async () => {
    const c = (await (await query({ query: "How much?", conversation_id: null })).json()) as any;
    expect([c.answer, c.sources]).toEqual(["No connected source answers this question.", []]);
    const b = (await (await query({ query: "How much is too much", max_results: 5 })).json()) as any;
    expect(b.results).toEqual([]);
    expect(b.search_summary.notes).toEqual([NAMES_NOTHING]);
  });

  test("attack: a quoted phrase of control characters or spaces alone is no phrase: the question names nothing, no newest record is given", async () => {
    for (const question of ['"\u0007\u0007"', '"\u0000 \u001b"', '"   "']) {
      const b = (await (await query({ query: question, max_results: 5 })).json()) as any;
      expect(b.results).toEqual([]);
      expect(b.search_summary.notes).toEqual([NAMES_NOTHING]);
    }
  });
});

describe("the archive and POST /v1/deep_search", () => {
  test("deep search finds an archived chunk by meaning, in shapes B and A", async () => {
    await query({ query: "Orlen fuel invoice in PLN" });
    await t.services.archive.settled();
    const b = (await (await deep({ query: "petrol station receipt from Poland" })).json()) as any;
    expect(b.query_id).toMatch(/^ds_/);
    expect(b.archive_results.length).toBeGreaterThan(0);
    const hit = b.archive_results.find((x: any) => x.original_query === "Orlen fuel invoice in PLN");
    expect(hit).toBeDefined();
    expect(hit.original_query_id).toMatch(/^qry_/);
    expect(hit.matched_chunk).toMatchObject({ source_connector: "docs" });
    expect(new Date(hit.matched_chunk.queried_at).toISOString()).toBe(hit.matched_chunk.queried_at);
    expect(b.total_matches).toBe(b.archive_results.length);
    const a = (await (await deep({ q: "petrol station receipt from Poland", top_k: 2 })).json()) as any;
    expect(a.results.length).toBeLessThanOrEqual(2);
    expect(a.results[0].id).toMatch(/^chk_/);
    expect(a.usage.tokens).toBeGreaterThan(0);
    expect(a.usage.archive_units).toBe(a.usage.tokens / 1000);
  });

  test("bounds and dates: max_results 1-50, bad dates 400, ranges by the time of the archived query", async () => {
    expect((await deep({ query: "x", max_results: 51 })).status).toBe(400);
    expect((await deep({ query: "x", max_results: 50 })).status).toBe(200);
    expect((await deep({ query: "x", date_from: "not a date" })).status).toBe(400);
    expect((await deep({ q: "x", time_range: "2024-01-01..soon" })).status).toBe(400);
    const today = new Date().toISOString().slice(0, 10);
    const inToday = (await (await deep({ query: "Orlen fuel invoice", date_from: today, date_to: today })).json()) as any;
    expect(inToday.archive_results.length).toBeGreaterThan(0);
    const past = (await (await deep({ q: "Orlen fuel invoice", time_range: "2020-01-01..2020-12-31" })).json()) as any;
    expect(past.results).toEqual([]);
  });

  test("the archive outlives a restart: a new process on the same data dir finds it", async () => {
    await query({ query: "Quality Hosting server invoice" });
    await t.services.archive.settled();
    const restarted = await testApp({ CORPUS_DATA_DIR: t.config.CORPUS_DATA_DIR, CORPUS_CONNECTOR_ROOTS: roots });
    try {
      const r = await restarted.app.handle(postJson("/v1/deep_search", { query: "hosting invoice" }, bearer(token)));
      expect(r.status).toBe(200);
      const body = (await r.json()) as any;
      expect(body.archive_results.some((x: any) => x.original_query === "Quality Hosting server invoice")).toBe(true);
    } finally {
      await restarted.services.close();
    }
  });

  test("one user never sees another's archive", async () => {
    const bob = (await t.services.auth.issuer.issue("bob", ["corpus:read"])).token;
    const r = (await (await deep({ query: "Orlen fuel invoice" }, bob)).json()) as any;
    expect(r.archive_results).toEqual([]);
  });

  test("no archived text in plaintext in any file of the data dir", async () => {
    const marker = (await (await query({ query: "Acme consulting invoice" })).json()) as any;
    const content: string = marker.results.flatMap((g: any) => g.chunks)[0].content;
    t.db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    const needle = Buffer.from(content.slice(0, 40));
    for (const f of readdirSync(t.config.CORPUS_DATA_DIR)) {
      expect([f, readFileSync(join(t.config.CORPUS_DATA_DIR, f)).includes(needle)]).toEqual([f, false]);
    }
  });

  test("the archive outlives its source: found after the file is gone", async () => {
    await query({ query: "Saeco coffee machine invoice" });
    await t.services.archive.settled();
    rmSync(join(roots, "docs", "saeco.pdf"));
    const r = (await (await deep({ query: "Saeco coffee machine" })).json()) as any;
    expect(r.archive_results.some((x: any) => x.original_query === "Saeco coffee machine invoice")).toBe(true);
  });
});

describe("partial results", () => {
  test("a failing connector yields a note, not a failed query", async () => {
    const add = await t.app.handle(
      postJson(
        "/v1/connectors",
        { id: "dead", kind: "imap", config: { host: "127.0.0.1", port: 1, secure: false, user: "x", password: "y" } },
        bearer(token),
      ),
    );
    expect(((await add.json()) as any).status).toBe("error");
    const r = await query({ query: "California electricity" });
    expect(r.status).toBe(200);
    const body = (await r.json()) as any;
    // Refused, filtered or silent: one answer (issue 13 item 6); a second ask within the backoff says when it is tried again.
    expect(body.search_summary.notes).toContainEqual(
      expect.stringMatching(/^dead: IMAP server 127\.0\.0\.1:1 cannot be reached(; next attempt in \d+ s)?$/),
    );
    expect(body.results.length).toBeGreaterThan(0);
    await t.app.handle(new Request("http://localhost/v1/connectors/dead", { method: "DELETE", headers: bearer(token) }));
  });
});
