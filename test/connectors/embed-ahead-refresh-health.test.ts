// Embedding ahead runs again AHEAD_REFRESH_MS after a try, "when the connector is next asked for"
// (registry.ts): a lazy refresh, for the questions to come. But the registry starts it from
// instance(), which GET /api/connectors/health reaches too (operatorHealth -> status -> instance),
// and that route needs no token. A server nobody asks anything, watched by a monitor's health
// probe, reads the operator's newest 5,000 rows (and looks each up, on the request thread) every
// 15 minutes for as long as it runs; and anyone who can reach the port starts that read.
import { Database } from "bun:sqlite";
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { AHEAD_REFRESH_MS } from "../../src/connectors/embed-ahead";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { req, tempDir } from "../helpers";
import { appPerTest } from "../support/app-per-test";
import { operatorFile, sqlSource } from "../support/sources";
import { vectorsWithoutModel } from "../support/vectors-without-model";

setDefaultTimeout(60_000);
const app = appPerTest();

const realNewest = SqlConnector.prototype.newest;
afterEach(() => {
  SqlConnector.prototype.newest = realNewest;
});

test("health probes alone, with no question asked, do not re-read the operator's database every AHEAD_REFRESH_MS", async () => {
  const file = join(tempDir("corpus-ahead-health-"), "shop.sqlite");
  const db = new Database(file);
  db.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, title TEXT, body TEXT)");
  const put = db.query("INSERT INTO orders VALUES (?, ?, ?)");
  // One transaction: a commit a row is a sync of the disk each (seconds on a busy machine).
  db.transaction(() => {
    for (let i = 1; i <= 20; i++) put.run(i, `order ${i}`, `Order ${i} shipped to warehouse ${i % 3}`);
  })();
  db.close();
  let reads = 0;
  SqlConnector.prototype.newest = function (this: SqlConnector, limit: number) {
    reads++;
    return realNewest.call(this, limit);
  };
  let at = Date.now();
  const t = await app(
    { CORPUS_CONNECTORS_FILE: operatorFile([sqlSource("shop", file, [{ name: "orders", id: "id", title: "title", text: ["body"] }])]) },
    () => at,
  );
  // Vectors as the model would store them (the model is not what this is about).
  vectorsWithoutModel(t.services.embeddings);
  const probe = async () => {
    expect((await t.app.handle(req("/api/connectors/health"))).status).toBe(200);
    await t.services.connectors.embeddedAhead();
  };

  // The connector's start: its newest rows read once (README: "read once the connector starts").
  await probe();
  expect(reads).toBe(1);
  // An hour of a monitor's probes (no token), and not one question.
  for (let i = 0; i < 4; i++) {
    at += AHEAD_REFRESH_MS + 1;
    await probe();
  }
  expect(reads).toBe(1);
});
