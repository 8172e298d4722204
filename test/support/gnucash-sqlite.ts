// shared/data's taxreport.gnucash as GnuCash 4.13 saves it in SQLite (made by
// connectors/books/fixtures/gnucash-sqlite.py, kept gzip-compressed).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";

export const taxreportSqlite = (): Buffer =>
  gunzipSync(readFileSync(join(import.meta.dir, "../connectors/books/fixtures/taxreport-sqlite.gnucash.gz")));
