// GnuCash books saved in SQLite (GnuCash's SQL backend: tables accounts, commodities,
// transactions, splits), read into the same transactions as the XML book of the same data
// (gnucash.ts), its texts trimmed as that reads them: each split's quantity (a fraction) booked to its account in the account's
// commodity, the description as payee, split memos as narration, `num` as the number. The
// file's bytes, already read within MAX_FILE_BYTES, are opened as a database in memory
// (sqlite3_deserialize, read-only): the file itself is never opened by SQLite, so no journal,
// lock or WAL file is made beside it (D19), and a hostile file costs this worker's budget (D31).
// A transaction's "line" is its row id, by which it is cited.
import { Database } from "bun:sqlite";
import { BookUnreadable, type OnTransaction, type ParsedBook } from "./format";
import { accountPath, fraction, type GnucashAccount } from "./gnucash";
import type { BookTransaction, Posting } from "./sums";

const MAGIC = "SQLite format 3\0";

/** Whether the bytes are a SQLite database (GnuCash names its SQLite books `.gnucash` too). */
export const isSqlite = (bytes: Uint8Array) => bytes.length >= 100 && Buffer.from(bytes.subarray(0, 16)).toString("latin1") === MAGIC;

/** The database in memory; a WAL-mode file is read as a rollback one (its header's version bytes), as nothing is written. */
function openInMemory(bytes: Uint8Array): Database {
  const copy = new Uint8Array(bytes);
  if (copy[18] === 2) copy[18] = 1;
  if (copy[19] === 2) copy[19] = 1;
  try {
    return Database.deserialize(copy, { readonly: true, safeIntegers: true });
  } catch {
    throw new BookUnreadable(1, "the SQLite database cannot be opened");
  }
}

const READ_TABLES = ["accounts", "commodities", "transactions", "splits"];

/**
 * Whether reading `table` runs what the file says (a generated column, a virtual table's module)
 * rather than copying what it holds: `printf('%.*c', 1e8, 'x')` as a column made 300 MB of text a
 * row from an 8 KB file, 2 s of CPU each (measured), past every bound a file's size gives (D31).
 * GnuCash writes neither.
 */
function computesWhenRead(db: Database, table: string): boolean {
  const sql = db.query<{ sql: string | null }, [string]>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table)?.sql;
  if (/^\s*CREATE\s+VIRTUAL\b/i.test(sql ?? "")) return true;
  // table_xinfo's hidden: 2 and 3 are generated columns (1, a virtual table's hidden ones).
  return db
    .query<{ hidden: bigint }, []>(`SELECT hidden FROM pragma_table_xinfo('${table}')`)
    .all()
    .some((c) => c.hidden !== 0n);
}

/** A column as text whatever its stored type (SQLite keeps any type in any column: a blob's .trim would throw). */
const text = (column: string, as = column) => `CAST(${column} AS TEXT) AS ${as}`;

interface SplitRow {
  tx_guid: string;
  account_guid: string;
  memo: string | null;
  quantity_num: bigint;
  quantity_denom: bigint;
}

export function parseGnucashSqlite(bytes: Uint8Array, file: string, onTransaction: OnTransaction = () => {}): ParsedBook {
  const db = openInMemory(bytes);
  try {
    const tables = new Set(
      db
        .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((r) => r.name),
    );
    for (const t of READ_TABLES) {
      if (!tables.has(t)) throw new BookUnreadable(1, `not a GnuCash SQLite book (no ${t} table)`);
      if (computesWhenRead(db, t)) throw new BookUnreadable(1, `not a GnuCash SQLite book (its ${t} table computes columns when read)`);
    }
    const commodities = new Map(
      db
        .query<{ guid: string; mnemonic: string }, []>(`SELECT ${text("guid")}, ${text("mnemonic")} FROM commodities`)
        .all()
        .map((r) => [r.guid, r.mnemonic]),
    );
    const accounts = new Map<string, GnucashAccount>();
    for (const a of db
      .query<{ guid: string; name: string | null; account_type: string; commodity_guid: string | null; parent_guid: string | null }, []>(
        `SELECT ${["guid", "name", "account_type", "commodity_guid", "parent_guid"].map((c) => text(c)).join(", ")} FROM accounts`,
      )
      .all())
      accounts.set(a.guid, {
        name: (a.name ?? "").trim(),
        parent: a.parent_guid ?? undefined,
        commodity: (a.commodity_guid && commodities.get(a.commodity_guid)) || "",
        root: a.account_type === "ROOT",
      });
    // Splits in the order GnuCash wrote them, as the XML book lists them.
    const splits = new Map<string, SplitRow[]>();
    for (const s of db
      .query<SplitRow, []>(
        `SELECT ${text("tx_guid")}, ${text("account_guid")}, ${text("memo")}, quantity_num, quantity_denom FROM splits ORDER BY rowid`,
      )
      .iterate()) {
      let list = splits.get(s.tx_guid);
      if (!list) splits.set(s.tx_guid, (list = []));
      list.push(s);
    }
    const transactions: BookTransaction[] = [];
    for (const t of db
      .query<{ line: bigint; guid: string; num: string | null; post_date: string | null; description: string | null }, []>(
        `SELECT rowid AS line, ${["guid", "num", "post_date", "description"].map((c) => text(c)).join(", ")} FROM transactions ORDER BY rowid`,
      )
      .iterate()) {
      const line = Number(t.line);
      // Stored in UTC; GnuCash posts a date at 10:59 UTC, the same day in every time zone.
      const date = /^(\d{4}-\d{2}-\d{2})/.exec(t.post_date ?? "")?.[1];
      if (!date) throw new BookUnreadable(line, "a transaction has no date posted");
      const postings: Posting[] = [];
      const memos: string[] = [];
      for (const s of splits.get(t.guid) ?? []) {
        if (!accounts.has(s.account_guid)) throw new BookUnreadable(line, "a split names no known account");
        postings.push({
          account: accountPath(accounts, s.account_guid),
          amount: fraction(`${s.quantity_num}/${s.quantity_denom}`, line),
          commodity: accounts.get(s.account_guid)!.commodity,
        });
        if (s.memo?.trim()) memos.push(s.memo.trim());
      }
      transactions.push({
        date,
        payee: t.description?.trim() ?? "",
        narration: memos.join("; "),
        postings,
        tags: [],
        meta: t.num?.trim() ? { number: t.num.trim() } : {},
        file,
        line,
      });
      onTransaction();
    }
    return { transactions, otherEntries: accounts.size };
  } catch (error) {
    if (error instanceof BookUnreadable || !(error instanceof Error) || error.name !== "SQLiteError") throw error;
    // SQLite's words may quote the file: only that it is broken is said.
    throw new BookUnreadable(1, "the SQLite database is broken");
  } finally {
    db.close();
  }
}
