// GnuCash books saved in SQLite (D34): the upstream tax report demo book, written by GnuCash
// 4.13's own SQLite backend from shared/data's XML book (fixtures/gnucash-sqlite.py, as its
// Save As does), reads into the same transactions as the XML book; a broken, cut or foreign
// SQLite file is refused with a reason that quotes nothing of it; the bytes are read in memory,
// so no journal or lock file appears beside the book.

import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BookUnreadable } from "../../../src/connectors/books/format";
import { parseGnucash } from "../../../src/connectors/books/gnucash";
import { isSqlite, parseGnucashSqlite } from "../../../src/connectors/books/gnucash-sqlite";
import { bookRecords } from "../../../src/connectors/books/records";
import { totalsOf } from "../../../src/connectors/books/sums";
import { SourceSkipped } from "../../../src/connectors/types";
import { tempDir } from "../../helpers";
import { taxreportSqlite } from "../../support/gnucash-sqlite";
import { SHARED_DATA } from "../../support/servers";

const XML_BOOK = join(SHARED_DATA, "accounting/gnucash/taxreport.gnucash");

/** A transaction as both formats give it, but where it sits in its file. */
const comparable = (t: { date: string; payee: string; narration: string; postings: unknown[]; meta: unknown }) =>
  JSON.stringify([t.date, t.payee, t.narration, t.postings, t.meta]);

describe("a GnuCash SQLite book", () => {
  const sqlite = taxreportSqlite();
  const fromXml = parseGnucash(readFileSync(XML_BOOK, "utf8"), "taxreport.gnucash").transactions;
  const fromSqlite = parseGnucashSqlite(sqlite, "taxreport.gnucash").transactions;

  test("holds the same 75 transactions as the XML book it was saved from: dates, payees, memos, postings to the cent, numbers", () => {
    expect(isSqlite(sqlite)).toBe(true);
    expect(fromSqlite.length).toBe(75);
    expect(fromSqlite.map(comparable).sort()).toEqual(fromXml.map(comparable).sort());
    // And so the same totals.
    for (const query of [{ account: "Expense" }, { account: "Income", from: "2000-06-01", to: "2001-01-01" }, { account: "Assets:Bank" }]) {
      const totals = totalsOf(fromSqlite, query).totals;
      expect(Object.keys(totals).length).toBeGreaterThan(0);
      expect(totals).toEqual(totalsOf(fromXml, query).totals);
    }
  });

  test("each transaction is a record at its row, through the books kind's reading", () => {
    const place = { file: "books/tax.gnucash", url: "file:///books/tax.gnucash", format: "gnucash" as const };
    const records = bookRecords(new Uint8Array(sqlite), place);
    expect(records.length).toBe(75);
    const ids = new Set(records.map((r) => r.id));
    expect(ids.size).toBe(75);
    expect(records[0]!.id).toMatch(/^books\/tax\.gnucash#L\d+$/);
    expect(records.map((r) => r.content).join("\n")).toContain("Fed Est Tax");
  });

  test("a cut, a foreign and a scrambled SQLite file are refused with a reason that quotes nothing of them", () => {
    const place = { file: "b.gnucash", url: "file:///b.gnucash", format: "gnucash" as const };
    const reasonOf = (bytes: Uint8Array) => {
      try {
        bookRecords(bytes, place);
      } catch (error) {
        expect(error).toBeInstanceOf(SourceSkipped);
        return (error as Error).message;
      }
      return "read";
    };
    // Cut to half: its pages past the cut are gone.
    expect(reasonOf(sqlite.subarray(0, sqlite.length / 2))).toStartWith("is not a readable GnuCash SQLite file (line 1: ");
    const chinook = readFileSync(join(SHARED_DATA, "chinook/Chinook_Sqlite.sqlite"));
    expect(reasonOf(chinook)).toBe("is not a readable GnuCash SQLite file (line 1: not a GnuCash SQLite book (no accounts table))");
    const scrambled = Buffer.from(sqlite);
    for (let i = 4096; i < scrambled.length; i += 97) scrambled[i] = (scrambled[i]! * 31 + 7) & 0xff;
    const reason = reasonOf(scrambled);
    expect(reason).not.toContain("Fed Est");
    expect(reason === "read" || reason.startsWith("is not a readable GnuCash SQLite file")).toBe(true);
    expect(() => parseGnucashSqlite(chinook, "c.gnucash")).toThrow(BookUnreadable);
  });

  test("a table that computes on reading (a generated column, a virtual table) is refused before any row is read: 8 KB may not become gigabytes (D31)", () => {
    const hostile = (change: string) => {
      const db = Database.deserialize(new Uint8Array(sqlite));
      db.exec(change);
      const bytes = db.serialize();
      db.close();
      return bytes;
    };
    // A column computed when read: a few bytes of schema, 10^8 characters a row (kept small here: the expression is what is refused).
    const generated = hostile(
      "ALTER TABLE accounts ADD COLUMN padding TEXT AS (printf('%.*c', 1000, 'x')); ALTER TABLE accounts RENAME COLUMN name TO stored_name; ALTER TABLE accounts ADD COLUMN name TEXT AS (stored_name || padding)",
    );
    expect(() => parseGnucashSqlite(generated, "g.gnucash")).toThrow(
      new BookUnreadable(1, "not a GnuCash SQLite book (its accounts table computes columns when read)"),
    );
    const virtual = hostile(
      "CREATE VIRTUAL TABLE fts USING fts5(memo); DROP TABLE splits; CREATE VIRTUAL TABLE splits USING fts5(tx_guid, account_guid, memo, quantity_num, quantity_denom)",
    );
    expect(() => parseGnucashSqlite(virtual, "v.gnucash")).toThrow(
      new BookUnreadable(1, "not a GnuCash SQLite book (its splits table computes columns when read)"),
    );
  });

  test("a text stored as a blob or a number is read as text, not a failure that names the reader's code", () => {
    const db = Database.deserialize(new Uint8Array(sqlite));
    db.exec(
      "UPDATE splits SET memo = CAST('Fed Est Tax memo' AS BLOB) WHERE rowid = (SELECT min(rowid) FROM splits); UPDATE transactions SET description = x'4142', num = 7 WHERE rowid = (SELECT min(rowid) FROM transactions)",
    );
    const bytes = db.serialize();
    db.close();
    const read = parseGnucashSqlite(bytes, "t.gnucash").transactions;
    expect(read.length).toBe(75);
    expect(read[0]!.payee).toBe("AB");
    expect(read[0]!.meta).toEqual({ number: "7" });
    expect(read.some((t) => t.narration.includes("Fed Est Tax memo"))).toBe(true);
  });

  test("the book on disk is never opened by SQLite: no journal, WAL or lock file beside it, even for a WAL-mode book", () => {
    const dir = tempDir("corpus-gnucash-sqlite-");
    const path = join(dir, "wal.gnucash");
    writeFileSync(path, sqlite);
    const db = new Database(path);
    db.exec("PRAGMA journal_mode = WAL");
    db.close();
    const wal = readFileSync(path);
    expect(wal[18]).toBe(2);
    expect(parseGnucashSqlite(wal, "wal.gnucash").transactions.length).toBe(75);
    expect(readdirSync(dir)).toEqual(["wal.gnucash"]);
  });
});
