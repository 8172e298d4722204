// A books connector given a GnuCash SQLite book (D34): read through the reading worker (D31) into
// its local index, a transaction a record at its row, found by its words; read whole for sums,
// the same totals as the XML book of the same data; the book untouched (D19).
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BooksConnector } from "../../../src/connectors/books/connector";
import { parseGnucash } from "../../../src/connectors/books/gnucash";
import { totalsOf } from "../../../src/connectors/books/sums";
import { SourceReader } from "../../../src/connectors/reading/reader";
import { tempDir } from "../../helpers";
import { fingerprint } from "../../support/fixtures";
import { taxreportSqlite } from "../../support/gnucash-sqlite";
import { ask, localIndexes } from "../../support/local-index";
import { SHARED_DATA } from "../../support/servers";

setDefaultTimeout(120_000);

describe("a books connector given a GnuCash SQLite book", () => {
  const dir = tempDir("corpus-gnucash-sqlite-");
  const path = join(dir, "household.gnucash");
  writeFileSync(path, taxreportSqlite());
  const before = fingerprint(dir);
  const reader = new SourceReader();
  // A connector given one file: its folder, scanned for it alone.
  const connector = new BooksConnector(dir, localIndexes().indexFor("t/gnucash"), {}, "household.gnucash", reader);

  afterAll(async () => {
    await connector.close();
    reader.close();
    expect(fingerprint(dir)).toEqual(before);
  });

  test("its 75 transactions are records, found by their words and cited at their row", async () => {
    await connector.sync();
    expect(await connector.health()).toMatchObject({ status: "ok", records: 75 });
    const found = await connector.search(ask(["fed", "est", "tax"]));
    expect(found.length).toBeGreaterThan(0);
    expect(found[0]!.path).toMatch(/^household\.gnucash#L\d+$/);
    expect(found[0]!.content).toContain("Expense:Taxes:Federal:Estimated");
  });

  test("read whole for sums: the totals of the XML book of the same data", async () => {
    const all = await connector.transactions();
    expect(all.length).toBe(75);
    const xml = parseGnucash(readFileSync(join(SHARED_DATA, "accounting/gnucash/taxreport.gnucash"), "utf8"), "x").transactions;
    const query = { account: "Expense:Taxes", from: "2000-01-01", to: "2001-01-01" };
    expect(totalsOf(all, query).totals).toEqual(totalsOf(xml, query).totals);
    expect(Object.keys(totalsOf(all, query).totals)).toEqual(["USD"]);
  });
});
