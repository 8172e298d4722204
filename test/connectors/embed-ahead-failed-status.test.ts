// README: an SQL source's status says `embedding`, with records done of total, "until they are".
// A try that fails part-way (a page refused: a full disk, the embedding worker failing) ends the
// run, and the status goes straight to `ok`, no reason, no progress, as if every record were
// embedded; the next try waits AHEAD_RETRY_MS and a question.
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
const ROWS = AHEAD_PAGE * 3;

test("a try that fails part-way does not show `ok` as if all the newest records were embedded", async () => {
  const file = join(tempDir("corpus-ahead-failed-"), "shop.sqlite");
  const db = new Database(file);
  db.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, title TEXT, body TEXT)");
  const put = db.query("INSERT INTO orders VALUES (?, ?, ?)");
  for (let i = 1; i <= ROWS; i++) put.run(i, `order ${i}`, `Order ${i} shipped to warehouse ${i % 13}`);
  db.close();
  const t = await app({
    CORPUS_CONNECTORS_FILE: operatorFile([sqlSource("shop", file, [{ name: "orders", id: "id", title: "title", text: ["body"] }])]),
  });
  let pages = 0;
  const withoutModel = vectorsWithoutModel(t.services.embeddings, async () => {
    if (++pages === 2) throw new Error("no space left on device");
  });
  const alice = await t.services.auth.issuer.issue("alice", ["connectors:read"]);
  const shop = async () => {
    const res = await t.app.handle(req("/v1/connectors", { headers: bearer(alice.token) }));
    expect(res.status).toBe(200);
    return ((await res.json()) as { connectors: ConnectorViewT[] }).connectors.find((c) => c.id === "shop")!;
  };
  try {
    await shop();
    await t.services.connectors.embeddedAhead();
  } finally {
    withoutModel.restore();
  }
  // One page of three was embedded.
  expect(withoutModel.stored()).toBe(AHEAD_PAGE);
  const after = await shop();
  expect(after.status).not.toBe("ok");
  // Where it stopped, until the next try (a question at least AHEAD_RETRY_MS later); no reason on the operator's.
  expect(after.status).toBe("embedding");
  expect(after.progress).toMatchObject({ phase: "embedding", unit: "records", done: AHEAD_PAGE, total: ROWS });
  expect(after.reason).toBeUndefined();
});
