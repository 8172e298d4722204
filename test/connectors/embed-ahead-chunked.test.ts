// D31: a SQL source's newest rows embedded ahead (embed-ahead.ts) are cut into their chunks in
// the reading worker, not on the serving thread, which loaded the tokenizer (~40 ms in one turn)
// and cut every row of each page there when a SQL connector was added. Counted: this thread's
// tokenizer is never asked, and the vectors cached are those of the chunks this thread would cut.
import { expect, setDefaultTimeout, spyOn, test } from "bun:test";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { AHEAD_PAGE } from "../../src/connectors/embed-ahead";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { shippedTokenizer, WordPieceTokenizer } from "../../src/embedding/tokenizer";
import { embeddedChunks } from "../../src/retrieval/chunk";
import { tempDir } from "../helpers";
import { appPerTest } from "../support/app-per-test";
import { CHINOOK_SQLITE, chinookInvoices } from "../support/chinook";

setDefaultTimeout(120_000);

const newApp = appPerTest();

test("attack: a SQL connector's rows embedded ahead are cut in the reading worker; the serving thread's tokenizer is never asked", async () => {
  const roots = tempDir("corpus-ahead-chunked-");
  mkdirSync(join(roots, "alice"), { recursive: true });
  const shop = join(roots, "alice", "shop.sqlite");
  copyFileSync(CHINOOK_SQLITE, shop);
  const { services } = await newApp({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") });
  const counted = spyOn(WordPieceTokenizer.prototype, "count");
  const encoded = spyOn(WordPieceTokenizer.prototype, "encode");
  try {
    await services.connectors.add("alice", { id: "shop", kind: "sql", config: { url: shop, tables: [chinookInvoices()] } } as never);
    await services.connectors.embeddedAhead();
    await services.embeddings.idle();
    // Was: every row of each page cut here, word by word.
    expect({ counted: counted.mock.calls.length, encoded: encoded.mock.calls.length }).toEqual({ counted: 0, encoded: 0 });
  } finally {
    counted.mockRestore();
    encoded.mockRestore();
  }
  // The vectors alice's cache holds are those of the texts this thread cuts from the same rows.
  const source = new SqlConnector({ url: shop, tables: [chinookInvoices()] });
  const rows = await source.newest(AHEAD_PAGE);
  await source.close();
  const tokenizer = shippedTokenizer();
  const texts = [...new Set(rows.flatMap((r) => embeddedChunks(r, tokenizer)))];
  expect(texts.length).toBeGreaterThanOrEqual(AHEAD_PAGE);
  expect(services.embeddings.cached("alice", texts).filter(Boolean)).toHaveLength(texts.length);
});
