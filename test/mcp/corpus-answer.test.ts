// corpus_answer (issue 40), against a real corpus over HTTP with the official v2 SDK client: the
// answer POST /v1/query's shape C gives for the same question, as data with its output schema;
// a books total is bean-query's to the cent, with its commodity, period and the transactions it
// sums (the first few cited, and how many); an extractive answer's statement with its value (an
// amount and its currency, a date); each source's citation opens with fetch and its sha256 is that
// of the text fetch returns; how sure it is follows the answer's features; another user gets
// nothing of the first's, a token without corpus:search cannot call it, and it counts against the
// same per-user query limit as corpus_search.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Value } from "@sinclair/typebox/value";
import { createLogger, memorySink } from "../../src/log";
import { TypedAnswer } from "../../src/questions/typed-answer";
import { type Running, startServer } from "../../src/server";
import { connectorsSettled, tempDir, testConfig } from "../helpers";
import { SHARED_DATA } from "../support/servers";

setDefaultTimeout(240_000);

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const BEANCOUNT = join(SHARED_DATA, "accounting", "beancount", "example.beancount");
const LIMIT_PER_MINUTE = 12;

const INVOICE = [
  "Zephyr Plumbing Ltd",
  "Invoice 7731",
  "Replacement of the boiler valve and two radiator thermostats at Kade 12.",
  "Amount due: 1,284.50 EUR",
  "Due date: 15 April 2024",
  "Please pay by bank transfer to NL91 ABNA 0417 1643 00.",
].join("\n");

let running: Running;
const tokens: Record<string, string> = {};

async function connect(token: string) {
  const client = new Client({ name: "corpus-test-answer", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${running.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

async function answerOf(client: Client, question: string): Promise<TypedAnswer> {
  const r = await client.callTool({ name: "corpus_answer", arguments: { question } });
  if (r.isError) throw new Error(JSON.stringify(r.content));
  const typed = r.structuredContent as TypedAnswer;
  // What the output schema promises, and the text item says the same answer.
  expect(Value.Check(TypedAnswer, typed)).toBe(true);
  expect((r.content as Array<{ text: string }>)[0]!.text.startsWith(typed.answer)).toBe(true);
  return typed;
}

async function shapeC(token: string, query: string) {
  const res = await fetch(`${running.url}/v1/query`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ query, conversation_id: null }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { answer: string; sources: Array<{ n: number; chunk_id: string; url: string; sha256: string }> };
}

/** bean-query's USD total over `where`. */
function beanTotal(where: string): string {
  const p = Bun.spawnSync(["bean-query", "-f", "csv", BEANCOUNT, `SELECT str(sum(number)) WHERE ${where} AND currency = 'USD'`], {
    stdout: "pipe",
  });
  // A Decimal's str() comes wrapped: Decimal('4608.22').
  return p.stdout
    .toString()
    .trim()
    .split("\n")[1]!
    .trim()
    .replace(/^Decimal\('(.*)'\)$/, "$1");
}

beforeAll(async () => {
  const roots = tempDir("corpus-answer-");
  for (const d of ["books", "docs"]) mkdirSync(join(roots, "alice", d), { recursive: true });
  mkdirSync(join(roots, "bob"), { recursive: true });
  copyFileSync(BEANCOUNT, join(roots, "alice", "books", "example.beancount"));
  writeFileSync(join(roots, "alice", "docs", "zephyr-invoice-7731.txt"), INVOICE);
  running = await startServer(
    testConfig({
      CORPUS_PORT: "0",
      CORPUS_CONNECTOR_ROOTS: join(roots, "{user}"),
      CORPUS_LIMIT_QUERY_PER_MINUTE: String(LIMIT_PER_MINUTE),
    }),
    createLogger("ERROR", memorySink().sink),
  );
  const s = running.services;
  for (const user of ["alice", "bob", "carol"])
    tokens[user] = (await s.auth.issuer.issue(user, ["corpus:search", "corpus:read", "connectors:read"])).token;
  tokens.connectorsOnly = (await s.auth.issuer.issue("alice", ["connectors:read"])).token;
  await s.connectors.add("alice", { id: "books", kind: "books", label: "Books", config: { path: join(roots, "alice", "books") } });
  await s.connectors.add("alice", { id: "docs", kind: "files", label: "Papers", config: { path: join(roots, "alice", "docs") } });
  await connectorsSettled(s, "alice");
});

afterAll(async () => {
  await running?.stop();
});

describe("corpus_answer (official v2 client, 2026-07-28)", () => {
  test("listed read-only, titled, with its output schema; not listed (nor callable) without corpus:search", async () => {
    const client = await connect(tokens.alice!);
    const tool = (await client.listTools()).tools.find((t) => t.name === "corpus_answer")!;
    expect(tool.annotations).toMatchObject({ title: "Answer from Corpus", readOnlyHint: true, destructiveHint: false });
    expect(tool.outputSchema?.properties).toHaveProperty("confidence");
    expect(Object.keys(tool.inputSchema.properties ?? {})).toEqual(["question", "connectors", "kinds", "date_from", "date_to"]);
    await client.close();
    const other = await connect(tokens.connectorsOnly!);
    expect((await other.listTools()).tools.map((t) => t.name)).not.toContain("corpus_answer");
    await expect(
      other.callTool({ name: "corpus_answer", arguments: { question: "How much did I spend on restaurants in 2014?" } }),
    ).rejects.toThrow();
    await other.close();
  });

  test("a books total: shape C's answer, bean-query's sum with its commodity and period, the transactions summed and cited", async () => {
    const question = "How much did I spend on restaurants in 2014?";
    const total = beanTotal("account ~ '^Expenses:Food:Restaurant' AND year = 2014");
    const rest = await shapeC(tokens.alice!, question);
    const client = await connect(tokens.alice!);
    const typed = await answerOf(client, question);
    // The same answer as REST's shape C, citing the same chunks in the same order.
    expect(typed.answer).toBe(rest.answer);
    expect(typed.sources.map((s) => [s.id, s.url, s.sha256])).toEqual(rest.sources.map((s) => [s.chunk_id, s.url, s.sha256]));
    expect(typed).toMatchObject({
      kind: "total",
      value: total,
      unit: "USD",
      period: { from: "2014-01-01", to: "2014-12-31", said: "in 2014" },
    });
    expect(typed.values[0]).toEqual({ value: total, unit: "USD" });
    expect(typed.answer).toContain(`${total} USD`);
    const count = Number(/in (\d+) transactions/.exec(typed.answer)![1]);
    expect(typed.transactions).toMatchObject({ count, cited: [1, 2, 3] });
    // Named every naming word, within the book's dates, transactions found: as sure as it gets.
    expect(typed.confidence_factors).toEqual({ named: 1, covers: 1, found: 1 });
    expect(typed.confidence).toBe(1);
    // Each cited transaction opens with fetch, and its citation's hash is of the text fetch returns.
    for (const n of typed.transactions!.cited) {
      const source = typed.sources[n - 1]!;
      const fetched = (await client.callTool({ name: "fetch", arguments: { id: source.id } })).structuredContent as any;
      expect(sha256(fetched.metadata.cited_text)).toBe(source.sha256);
      expect(fetched.text).toContain("Expenses:Food:Restaurant");
    }
    await client.close();
  });

  test("a balance names its day; a period the book does not cover lowers how sure it is", async () => {
    const client = await connect(tokens.alice!);
    const balance = await answerOf(client, "What was the balance of Assets:US:BofA:Checking at the end of March 2015?");
    expect(balance).toMatchObject({ kind: "balance", unit: "USD", period: { from: null, to: "2015-03-31" } });
    expect(balance.answer).toContain(`${balance.value} USD`);
    const outside = await answerOf(client, "How much did I spend on restaurants in 1999?");
    expect(outside.kind).toBe("total");
    expect(outside.confidence_factors.covers).toBe(0.5);
    expect(outside.confidence).toBeLessThan(1);
    await client.close();
  });

  test("an extractive answer: the statement, its amount and currency, or its date; the same as shape C's", async () => {
    const client = await connect(tokens.alice!);
    const question = "How much is the amount due on the Zephyr Plumbing invoice?";
    const rest = await shapeC(tokens.alice!, question);
    const amount = await answerOf(client, question);
    expect(amount.answer).toBe(rest.answer);
    expect(amount.sources.map((s) => s.id)).toEqual(rest.sources.map((s) => s.chunk_id));
    expect(amount.kind).toBe("statement");
    const said = amount.statements.find((s) => s.value === "1284.50")!;
    expect(said).toMatchObject({ unit: "EUR" });
    expect(amount.answer).toContain(`${said.text} [${said.source}]`);
    expect(amount).toMatchObject({ value: "1284.50", unit: "EUR", transactions: null });
    expect(amount.confidence).toBeGreaterThan(0);
    expect(amount.confidence).toBeLessThanOrEqual(1);
    const date = await answerOf(client, "When is the Zephyr Plumbing invoice due?");
    expect(date.statements.some((s) => s.value === "2024-04-15")).toBe(true);
    // Kinds that leave the books out: no books sum is said, its transactions not being among the sources.
    const filtered = await client.callTool({
      name: "corpus_answer",
      arguments: { question: "How much did I spend on restaurants in 2014?", kinds: ["document"] },
    });
    const typed = filtered.structuredContent as TypedAnswer;
    expect(typed.kind).not.toBe("total");
    expect(typed.transactions).toBeNull();
    expect(typed.sources.every((s) => s.connector === "docs")).toBe(true);
    for (const said of typed.statements) expect(typed.sources[said.source - 1]).toBeDefined();
    await client.close();
  });

  test("isolation: another user's question answers nothing of the first's", async () => {
    const client = await connect(tokens.bob!);
    const typed = await answerOf(client, "How much did I spend on restaurants in 2014?");
    expect(typed.sources).toEqual([]);
    expect(typed.kind).toBe("none");
    expect(typed.value).toBeNull();
    expect(typed.confidence).toBe(0);
    await client.close();
  });

  test("the same per-user query limit as corpus_search: over it, a tool error, not an answer", async () => {
    const client = await connect(tokens.carol!);
    const minute = () => Math.floor(Date.now() / 60_000);
    const started = minute();
    let allowed = 0;
    let refused: Awaited<ReturnType<Client["callTool"]>> | undefined;
    for (let i = 0; i < 2 * LIMIT_PER_MINUTE + 2 && !refused; i++) {
      const r = await client.callTool({ name: "corpus_answer", arguments: { question: `invoice number ${i}` } });
      if (r.isError) refused = r;
      else allowed++;
    }
    expect(JSON.stringify(refused?.content)).toContain("Rate limit exceeded");
    // Fixed windows: exactly the limit, unless the loop crossed into the next minute.
    if (minute() === started) expect(allowed).toBe(LIMIT_PER_MINUTE);
    await client.close();
  });
});
