// A question holding a NUL or another control character (pasted, or sent by a client that
// writes "\u0000") is answered as if the character were a space, over every kind of source: a
// folder's index (its words), SQL on SQLite and PostgreSQL (a NUL PostgreSQL refuses in a value)
// and IMAP SEARCH (no way to quote one): the same results, scores and answer, never an error or
// nothing. The model's tokenizer dropped such a character, joining "at\u0000Nando's" into one
// word, while the plan split there: the ranking and the answer changed.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bearer, connectorsSettled, postJson, tempDir, testApp } from "../helpers";
import { CHINOOK_SQLITE, chinookCustomers, chinookInvoices } from "../support/chinook";
import { SHARED_DATA, testServers } from "../support/servers";
import { imapSource, operatorFile } from "../support/sources";

setDefaultTimeout(300_000);

let t: Awaited<ReturnType<typeof testApp>>;
let token: string;

beforeAll(async () => {
  const docs = tempDir("corpus-control-docs-");
  // Nando's receipts, and those the question with a NUL ranked among them.
  const kept = new Set(["061", "078", "221", "531", "065", "164", "427", "436", "182", "166"]);
  for (const line of readFileSync(join(SHARED_DATA, "receipts", "receipts.jsonl"), "utf8")
    .trim()
    .split("\n")) {
    const r = JSON.parse(line) as { id: string; text: string };
    if (kept.has(r.id)) writeFileSync(join(docs, `${r.id}.txt`), `${r.text}\n`);
  }
  const servers = await testServers();
  const shop = (id: string, url: string, dialect: "sqlite" | "postgres") => ({
    id,
    kind: "sql",
    label: id,
    config: { url, tables: [chinookInvoices(dialect), chinookCustomers(["FirstName", "LastName", "Address", "City", "Country"], dialect)] },
  });
  const file = operatorFile([
    { id: "docs", kind: "files", label: "Receipts", config: { path: docs } },
    shop("shop", CHINOOK_SQLITE, "sqlite"),
    shop("shoppg", servers.pgUrl, "postgres"),
    imapSource(servers.imap, "mail", "Mail"),
  ]);
  t = await testApp({ CORPUS_CONNECTORS_FILE: file, CORPUS_CONNECTOR_ROOTS: docs, CORPUS_LIMIT_QUERY_PER_MINUTE: "100000" });
  token = (await t.services.auth.issuer.issue("alice", ["corpus:search", "corpus:read"])).token;
  await connectorsSettled(t.services, "alice");
});

afterAll(async () => {
  await t.services.close();
});

interface Asked {
  status: number;
  results: string[];
  answer: string;
}
async function ask(question: string, connector: string): Promise<Asked> {
  const a = await t.app.handle(postJson("/v1/query", { q: question, top_k: 8, filters: { connectors: [connector] } }, bearer(token)));
  const c = await t.app.handle(postJson("/v1/query", { query: question, conversation_id: null, connectors: [connector] }, bearer(token)));
  const shapeA = (await a.json()) as { results?: Array<{ source: { path: string }; score: number }> };
  const shapeC = (await c.json()) as { answer?: string };
  return {
    status: a.status * 1000 + c.status,
    results: (shapeA.results ?? []).map((r) => `${r.source.path} ${r.score}`),
    answer: shapeC.answer ?? "",
  };
}

/** NUL, a bell, an escape, DEL, NEL (C1), a pasted line break, and several NULs in a row. */
const CONTROLS = ["\u0000", "\u0007", "\u001b", "\u007f", "\u0085", "\r\n", "\u0000\u0000\u0000"];

describe.each([
  ["a folder's index", "docs", "How much did I spend at Nando's?"],
  ["SQL on SQLite", "shop", "Who lives at Barbarossastrasse 19?"],
  ["SQL on PostgreSQL", "shoppg", 'customers in "Sao Paulo" Brazil'],
  ["IMAP SEARCH", "mail", 'mails about "price caps" in California'],
])("%s", (_, connector, question) => {
  let plain: Asked;
  beforeAll(async () => {
    // Records met for the first time are ranked by their words while their meaning is embedded:
    // asked once and embedded first, the question is ranked by both every time after.
    await ask(question, connector);
    await t.services.embeddings.idle();
    plain = await ask(question, connector);
  });

  test("control: the question with spaces is answered", () => {
    expect(plain.status).toBe(200_200);
    expect(plain.results.length).toBeGreaterThan(0);
    expect(plain.answer.length).toBeGreaterThan(0);
  });

  test.each(CONTROLS.map((c) => [JSON.stringify(c), c]))("%s in place of each space, and inside the quoted phrase", async (_, c) => {
    for (const variant of [question.replaceAll(" ", c), question.replace(/ (\S+)$/, `${c}$1`), `${question}${c}`]) {
      expect({ variant, ...(await ask(variant, connector)) }).toEqual({ variant, ...plain });
    }
  });
});
