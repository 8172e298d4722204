// D31: a record's chunks are cut in the reading worker, with its reading, never on the serving
// thread: the record arrives with its chunks, its index stores their texts, and embedding reads
// them. Cutting was the longest turn left there while a folder was indexed (53 ms of CPU). Every
// local kind (files: documents and spreadsheets; maildir: messages and an mbox; books), counted:
// this thread's tokenizer is never asked while the folders are indexed and their chunks handed
// to embedding, and the chunks are those this thread would have cut.
import { afterAll, expect, spyOn, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { booksSource } from "../../src/connectors/books/connector";
import { filesSource } from "../../src/connectors/files/connector";
import type { FolderSource } from "../../src/connectors/indexed-source";
import { EmbeddedIndex, indexKeysFor, indexMigrations, syncIndex } from "../../src/connectors/local-index";
import { maildirSource } from "../../src/connectors/maildir/connector";
import { SourceReader } from "../../src/connectors/reading/reader";
import type { SourceRecord } from "../../src/connectors/types";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { shippedTokenizer, WordPieceTokenizer } from "../../src/embedding/tokenizer";
import { embeddedChunks } from "../../src/retrieval/chunk";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";
import { OFFICE_FIXTURES } from "../support/office";

const DATA = join(import.meta.dir, "../../../shared/data");
const reader = new SourceReader();
afterAll(() => reader.close());

/** A folder of each local kind, its files of every shape the reading worker answers. */
function folders(): Record<string, FolderSource> {
  const root = tempDir("corpus-chunked-where-read-");
  const docs = join(root, "docs");
  mkdirSync(docs);
  copyFileSync(join(OFFICE_FIXTURES, "invoices.xlsx"), join(docs, "invoices.xlsx"));
  copyFileSync(join(OFFICE_FIXTURES, "agreement.odt"), join(docs, "agreement.odt"));
  // Long enough for several chunks, and a file whose record takes its name for a title.
  const sentences = Array.from({ length: 400 }, (_, i) => `Clause ${i} binds the supplier to deliver batch ${i} by noon.`);
  writeFileSync(join(docs, "terms.txt"), sentences.join(" "));
  writeFileSync(join(docs, "notes.md"), "# Offsite\n\nThe offsite is in Lisbon; the team dinner is in Porto.");
  const mail = join(root, "mail");
  mkdirSync(mail);
  for (const name of readdirSync(join(DATA, "enron/messages")).sort().slice(0, 12))
    copyFileSync(join(DATA, "enron/messages", name), join(mail, name));
  const mbox = Array.from(
    { length: 5 },
    (_, i) => `From a@example.com Mon Jan  1 00:00:00 2001\nFrom: a@example.com\nSubject: note ${i}\n\nbody ${i}\n\n`,
  );
  writeFileSync(join(mail, "notes.mbox"), mbox.join(""));
  const books = join(root, "books");
  mkdirSync(books);
  copyFileSync(join(DATA, "accounting/beancount/example.beancount"), join(books, "example.beancount"));
  return {
    docs: filesSource(docs, undefined, reader),
    mail: maildirSource(mail, undefined, reader),
    books: booksSource(books, undefined, reader),
  };
}

test("attack: every local kind's records are cut into chunks where they are read; the serving thread's tokenizer is never asked, and the chunks are the same", async () => {
  const db = openDatabase(tempDir(), [...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(db, randomBytes(32));
  const tokenizer = shippedTokenizer();
  const sources = folders();
  const counted = spyOn(WordPieceTokenizer.prototype, "count");
  const encoded = spyOn(WordPieceTokenizer.prototype, "encode");
  let cut = 0;
  const pending: Record<string, string[]> = {};
  try {
    for (const [id, source] of Object.entries(sources)) {
      const index = new EmbeddedIndex(db, `alice/${id}`, indexKeysFor(keys, "alice", id, true), (r) => {
        cut++;
        return embeddedChunks(r, tokenizer);
      });
      const result = await syncIndex(index, source.scan(), (e) => source.read(e));
      expect(result).toMatchObject({ failed: [], skipped: [] });
      pending[id] = index.pendingChunks(100_000).map((c) => c.text);
    }
    // Cut on this thread, each record was counted word by word (was: every record, twice over).
    expect({ cut, counted: counted.mock.calls.length, encoded: encoded.mock.calls.length }).toEqual({ cut: 0, counted: 0, encoded: 0 });
  } finally {
    counted.mockRestore();
    encoded.mockRestore();
  }
  // The texts embedded are those this thread cuts from the same records (sorted: sources are read in scan order).
  for (const [id, source] of Object.entries(sources)) {
    const records: SourceRecord[] = [];
    for (const e of source.scan()) records.push(...(await source.read(e)));
    const expected = records.flatMap((r) => embeddedChunks(r, tokenizer)).sort();
    expect(pending[id]!.length).toBeGreaterThan(id === "docs" ? 10 : records.length - 1);
    expect([...pending[id]!].sort()).toEqual(expected);
  }
  db.close();
});
