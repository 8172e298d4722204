// Attack on embedding ahead (src/connectors/embed-ahead.ts, registry.startEmbeddingAhead): the
// page of a SQL connector's newest rows handed to the embedding service is stored in the owner's
// cache whenever it completes, even after the connector was removed or re-pointed, or its user
// deleted: `live()` is only asked before the next page, and nothing stops the page in flight.
import { Database } from "bun:sqlite";
import { expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { AHEAD_RECORDS } from "../../src/connectors/embed-ahead";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { embeddingText, recordChunks } from "../../src/retrieval/chunk";
import { bearer, req, tempDir, tokenFor } from "../helpers";
import { type App, appPerTest } from "../support/app-per-test";
import { CHINOOK_SQLITE, chinookInvoices } from "../support/chinook";

setDefaultTimeout(120_000);

const newApp = appPerTest();
let t: App | undefined;

/** Alice's copy of the shop, under her root; the app; her connector added (its first page of rows queued for embedding). */
async function aliceWithShop() {
  const roots = tempDir("corpus-ahead-removal-");
  mkdirSync(join(roots, "alice"), { recursive: true });
  const shop = join(roots, "alice", "shop.sqlite");
  copyFileSync(CHINOOK_SQLITE, shop);
  const notes = join(roots, "alice", "notes.sqlite");
  const db = new Database(notes);
  db.exec("CREATE TABLE Note (id INTEGER PRIMARY KEY, title TEXT, body TEXT)");
  db.exec("INSERT INTO Note VALUES (1, 'Lighthouse', 'The lighthouse keeper retires in spring.')");
  db.close();
  t = await newApp({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") });
  const { services } = t;
  await services.connectors.add("alice", { id: "shop", kind: "sql", config: { url: shop, tables: [chinookInvoices()] } } as never);
  // The first page of the shop's newest rows is in the embedding queue (the model is loading).
  await services.embeddings.queued();
  expect(services.embeddings.pending).toBeGreaterThan(0);
  // The texts the shop's rows are embedded as (services.ts's chunker).
  const source = new SqlConnector({ url: shop, tables: [chinookInvoices()] });
  const rows = await source.newest(AHEAD_RECORDS);
  await source.close();
  const texts = [...new Set(rows.flatMap((r) => recordChunks(r, services.embeddings.tokenizer).map((c) => embeddingText(r.title, c))))];
  /** How many of the shop's rows' (distinct) texts alice's cache holds a vector of. */
  const shopVectors = () => services.embeddings.cached("alice", texts).filter(Boolean).length;
  const settle = async () => {
    await services.connectors.embeddedAhead();
    await services.embeddings.idle();
  };
  return { services, shop, notes, shopVectors, settle };
}

test("attack: a SQL connector removed while its rows are embedded ahead gets vectors of its rows stored afterwards", async () => {
  const { services, shopVectors, settle } = await aliceWithShop();
  const before = services.embeddings.rowsOf("alice");
  await services.connectors.remove("alice", "shop");
  const afterRemoval = services.embeddings.rowsOf("alice");
  await settle();
  // Was { before: 0, afterRemoval: 0, storedLater: 64, shopVectors: 64 }: the first page (64
  // rows) in flight is stored once computed, after remove() answered.
  expect({ before, afterRemoval, storedLater: services.embeddings.rowsOf("alice"), shopVectors: shopVectors() }).toEqual({
    before: 0,
    afterRemoval: 0,
    storedLater: 0,
    shopVectors: 0,
  });
});

test("attack: a SQL connector re-pointed (PATCH) while its rows are embedded ahead: the old database's rows are stored afterwards", async () => {
  const { services, notes, shopVectors, settle } = await aliceWithShop();
  await services.connectors.update("alice", "shop", {
    config: { url: notes, tables: [{ name: "Note", id: "id", title: "title", text: ["body"] }] },
  } as never);
  await settle();
  // The new database's row is embedded ahead, as it should; none of the old one's may be.
  expect(services.embeddings.rowsOf("alice")).toBeGreaterThan(0);
  // Was 64: the old database's first page, stored after update() answered.
  expect(shopVectors()).toBe(0);
});

test("attack: a user deleted while their rows are embedded ahead: the page in flight lands in the cache under their next key", async () => {
  const { services, shopVectors, settle } = await aliceWithShop();
  const token = await tokenFor(services, "alice", ["corpus:search", "connectors:write", "connectors:read"]);
  const deleted = await t!.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(token) }));
  expect(deleted.status).toBe(200);
  expect(services.embeddings.rowsOf("alice")).toBe(0);
  // Alice comes back (as the same subject): her next write makes her a new data key (a question's
  // archive, a connector added). Made at once here, while the page of her deleted shop still embeds.
  services.userKeys.keyFor("alice");
  await settle();
  // Was 64 rows of the deleted user's database, stored under the key of the new one (D25:
  // "nothing of theirs is written after").
  expect({ cacheRows: services.embeddings.rowsOf("alice"), shopVectors: shopVectors() }).toEqual({ cacheRows: 0, shopVectors: 0 });
});
