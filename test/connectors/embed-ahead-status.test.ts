// A live source's newest records embedded ahead show as work a person can follow (issue 14): the
// connector's status is `embedding`, with records done of total, rate and time left, until they
// are; then `ok`. Its answers do not wait for it.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { AHEAD_PAGE } from "../../src/connectors/embed-ahead";
import type { ConnectorViewT } from "../../src/connectors/model";
import { bearer, req, tempDir } from "../helpers";
import { appPerTest } from "../support/app-per-test";
import { operatorFile, sqlSource } from "../support/sources";
import { vectorsWithoutModel } from "../support/vectors-without-model";

const app = appPerTest();
const ROWS = AHEAD_PAGE * 2 + 22;

test("GET /v1/connectors: `embedding` with the records embedded ahead so far, then `ok` once all are", async () => {
  const file = join(tempDir("corpus-ahead-status-"), "shop.sqlite");
  const db = new Database(file);
  db.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, title TEXT, body TEXT)");
  const put = db.query("INSERT INTO orders VALUES (?, ?, ?)");
  for (let i = 1; i <= ROWS; i++) put.run(i, `order ${i}`, `Order ${i} shipped to warehouse ${i % 13}`);
  db.close();
  const t = await app({
    CORPUS_CONNECTORS_FILE: operatorFile([sqlSource("shop", file, [{ name: "orders", id: "id", title: "title", text: ["body"] }])]),
  });
  // The second page is held until the test lets it go.
  let pages = 0;
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let reachedSecond = () => {};
  const second = new Promise<void>((resolve) => (reachedSecond = resolve));
  const withoutModel = vectorsWithoutModel(t.services.embeddings, async () => {
    if (++pages !== 2) return;
    reachedSecond();
    await held;
  });
  const alice = await t.services.auth.issuer.issue("alice", ["connectors:read", "corpus:search"]);
  const shop = async () => {
    const res = await t.app.handle(req("/v1/connectors", { headers: bearer(alice.token) }));
    expect(res.status).toBe(200);
    return ((await res.json()) as { connectors: ConnectorViewT[] }).connectors.find((c) => c.id === "shop")!;
  };
  try {
    await shop();
    await second;
    const during = await shop();
    expect(during.status).toBe("embedding");
    expect(during.progress).toMatchObject({ phase: "embedding", unit: "records", done: AHEAD_PAGE, total: ROWS });
    // Questions are answered meanwhile, from the source itself.
    const asked = await t.app.handle(
      req("/v1/query", {
        method: "POST",
        headers: { ...bearer(alice.token), "content-type": "application/json" },
        body: JSON.stringify({ query: "warehouse order" }),
      }),
    );
    expect(asked.status).toBe(200);
    expect(((await asked.json()) as { results: unknown[] }).results.length).toBeGreaterThan(0);
  } finally {
    release();
  }
  await t.services.connectors.embeddedAhead();
  withoutModel.restore();
  expect(withoutModel.stored()).toBeGreaterThanOrEqual(ROWS);
  const after = await shop();
  expect(after.status).toBe("ok");
  expect(after.progress).toBeUndefined();
});
