// Attack on embedding ahead after a connector is re-pointed (PATCH) at a config that reads the
// same rows (here: only the tables' source_url template changes). The new connector's embedding
// ahead starts at once, while the old one's page is still queued; the embedding service's
// de-duplication (queuedTexts) makes the new page wait on the old job's vectors, and that job is
// no longer wanted (its connector is gone): it stores nothing, so the new connector's first page
// is never cached, though its embedding ahead counts as done.
import { expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { AHEAD_RECORDS, AHEAD_RETRY_MS } from "../../src/connectors/embed-ahead";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { embeddingText, recordChunks } from "../../src/retrieval/chunk";
import { tempDir } from "../helpers";
import { type App, appPerTest } from "../support/app-per-test";
import { CHINOOK_SQLITE, chinookInvoices } from "../support/chinook";

setDefaultTimeout(180_000);

const newApp = appPerTest();
let t: App | undefined;

test("attack: a connector re-pointed at the same rows while its first page embeds ahead: that page is never cached", async () => {
  const roots = tempDir("corpus-ahead-repoint-");
  mkdirSync(join(roots, "alice"), { recursive: true });
  const shop = join(roots, "alice", "shop.sqlite");
  copyFileSync(CHINOOK_SQLITE, shop);
  let at = Date.now();
  t = await newApp({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") }, () => at);
  const { services } = t;
  await services.connectors.add("alice", { id: "shop", kind: "sql", config: { url: shop, tables: [chinookInvoices()] } } as never);
  // The first page of the shop's newest rows is in the embedding queue (the model is loading).
  await services.embeddings.queued();
  expect(services.embeddings.pending).toBeGreaterThan(0);

  // Re-pointed: the same database and table, only the links to its rows change (the rows' texts do not).
  const tables = [{ ...chinookInvoices(), url: "https://shop.example/invoices/{id}" }];
  await services.connectors.update("alice", "shop", { config: { url: shop, tables } } as never);
  await services.connectors.embeddedAhead();
  await services.embeddings.idle();
  // Not a try that failed and is made again later: past AHEAD_RETRY_MS, the connector asked for again.
  at += AHEAD_RETRY_MS + 1;
  await services.connectors.list("alice");
  await services.connectors.embeddedAhead();
  await services.embeddings.idle();

  // The texts the (new) connector's newest rows are embedded as (services.ts's chunker).
  const source = new SqlConnector({ url: shop, tables });
  const rows = await source.newest(AHEAD_RECORDS);
  await source.close();
  const texts = [...new Set(rows.flatMap((r) => recordChunks(r, services.embeddings.tokenizer).map((c) => embeddingText(r.title, c))))];
  const missing = services.embeddings.cached("alice", texts).filter((v) => !v).length;
  // Was 47 (the distinct texts of the first page, AHEAD_PAGE rows): the new connector's embedding ahead waited on the
  // removed connector's job, which stores nothing, and then counted the page as embedded.
  expect({ texts: texts.length, missing }).toEqual({ texts: texts.length, missing: 0 });
});
