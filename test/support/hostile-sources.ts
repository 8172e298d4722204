// Issue 35's hostile sources, one of each kind a source can send (D31): a folder of documents,
// a mail folder and a SQLite table, each with one harmless record beside. Used by the attack
// test (connectors/hostile-sources.test.ts) and scripts/bench/hostile-sources.ts.
import { Database } from "bun:sqlite";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXPANDS_TOO_FAR, MAX_HTML_DEPTH, MAX_RECORD_CHARS } from "../../src/connectors/files/limits";
import { TOOK_TOO_LONG } from "../../src/connectors/reading/reader";
import { docxBomb, pdfStreamFlood } from "./bombs";

/** A mail whose body is `megabytes` of HTML paragraphs: mailparser takes ~2 s a megabyte to make text of it. */
export const htmlMail = (megabytes: number, subject: string) =>
  `From: a@example.com\nTo: b@example.com\nSubject: ${subject}\nContent-Type: text/html\n\n${"<p>word ".repeat(megabytes * 131_072)}\n`;

/** The rows' table: 20 rows of one 1 MB column of words without a sentence, and one plain row. */
export const HOSTILE_TABLE = { name: "notes", id: "id", title: "title", text: ["body"] };
export const HUGE_ROWS = 20;

export interface HostileSources {
  docs: string;
  mail: string;
  database: string;
  /** Why each hostile file is skipped (the huge mail is read: its HTML's tags dropped, past MAX_MAIL_HTML_CHARS). */
  reasons: Record<string, string[]>;
}

/** Writes the sources under `root`. */
export function writeHostileSources(root: string): HostileSources {
  const docs = join(root, "docs");
  const mail = join(root, "mail");
  mkdirSync(docs, { recursive: true });
  mkdirSync(join(mail, "cur"), { recursive: true });
  // The outside review's PDF: 2.1 MB of `stream` lines (19-22 s of the serving thread before the fix).
  writeFileSync(join(docs, "streams.pdf"), pdfStreamFlood(300_000));
  // A DOCX whose document inflates to 570 MB, and a ZIP whose directory understates it.
  writeFileSync(join(docs, "bomb.docx"), docxBomb(570).file);
  writeFileSync(join(docs, "zip-bomb.docx"), docxBomb(570, "understated", false).file);
  // One CSV line of 1 MB, read; and one of 3,000,000 columns (6 MB): ~4 s a million columns of csv-parse.
  writeFileSync(join(docs, "long-line.csv"), `note,amount\n${"x".repeat(1_000_000)},1\n`);
  writeFileSync(join(docs, "wide.csv"), "x,".repeat(3_000_000));
  // 8 MB of nested tags: html-to-text walks them recursively.
  writeFileSync(join(docs, "nested.html"), `<html><body>${"<b>".repeat(2_700_000)}deep</body></html>`);
  writeFileSync(join(docs, "notes.txt"), "The offsite is in Lisbon.");
  // 24 MB of HTML in one mail: ~45 s and 2.6 GB of mailparser, when it made all of it into text.
  writeFileSync(join(mail, "cur", "1.eml"), htmlMail(24, "huge"));
  writeFileSync(join(mail, "cur", "2.eml"), "From: a@example.com\nSubject: offsite\n\nThe offsite moved to Porto.\n");
  const database = join(root, "shop.db");
  const db = new Database(database);
  db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, body TEXT)");
  const insert = db.query("INSERT INTO notes VALUES (?, ?, ?)");
  const words = "lorem ipsum dolor sit amet ".repeat(40_000);
  db.transaction(() => {
    for (let i = 1; i <= HUGE_ROWS; i++) insert.run(i, `note ${i} porto`, `${words} porto`);
    insert.run(HUGE_ROWS + 1, "offsite", "The offsite moved to Porto.");
  })();
  db.close();
  return {
    docs,
    mail,
    database,
    reasons: {
      "streams.pdf": ["is not a readable PDF file"],
      "bomb.docx": [EXPANDS_TOO_FAR],
      "zip-bomb.docx": [EXPANDS_TOO_FAR],
      // Past its budget, or its line found too long first (on a fast machine).
      "wide.csv": [TOOK_TOO_LONG, `has a line longer than ${MAX_RECORD_CHARS} characters`],
      "nested.html": [`nests elements deeper than ${MAX_HTML_DEPTH} levels`],
    },
  };
}
