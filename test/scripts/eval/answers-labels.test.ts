// The answer evaluation's labels stay honest (D32, issue 36 item 5): enough questions, a quarter
// in the invoices' languages, halves balanced per source, the issue's phrasings present, and every
// fact written in its record as shared/data holds it. The records are read here from the files
// themselves, not through corpus's connectors: a label must not depend on what corpus reads.
// A books fact is a sum, written in no record: its tools compute it (answers-books-labels.test.ts).
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type AnswerQuestion, factPattern, loadAnswerLabels } from "../../../scripts/eval/answers-labels";
import { CHINOOK_SQLITE } from "../../support/chinook";
import { SHARED_DATA } from "../../support/servers";

const labels = loadAnswerLabels();
const INVOICE_LANGUAGES = new Set(["nl", "fr", "de", "pl"]);
const SHOP_TABLES = new Set(["Invoice", "Customer", "Employee", "Track"]);

/** A message's subject and body as written: quoted-printable undone (three of the labelled messages use it). */
function mailText(file: string): string {
  const raw = readFileSync(file, "latin1");
  const split = raw.search(/\r?\n\r?\n/);
  const head = raw.slice(0, split);
  let body = raw.slice(split);
  if (/^content-transfer-encoding:\s*quoted-printable/im.test(head))
    body = body.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return `${/^subject:(.*)$/im.exec(head)?.[1] ?? ""}\n${body}`;
}

const receipts = new Map(
  readFileSync(join(SHARED_DATA, "receipts", "receipts.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { id: string; text: string })
    .map((r) => [r.id, r.text]),
);

/** The text of a labelled record, or undefined when the label names none. */
function recordText(key: string, shop: Database): string | undefined {
  const [source, name] = [key.slice(0, key.indexOf(":")), key.slice(key.indexOf(":") + 1)];
  if (source === "mail") {
    const file = join(SHARED_DATA, "enron", "messages", `${name}.eml`);
    return existsSync(file) ? mailText(file) : undefined;
  }
  if (source === "invoices") {
    // An invoice is its text (pdftotext's, or Orlen's own .txt) and its expected-field JSON.
    const files = [`${name}.pdftotext.txt`, `${name}.txt`, `${name}.json`].map((f) => join(SHARED_DATA, "invoices", f)).filter(existsSync);
    return files.length ? files.map((f) => readFileSync(f, "utf8")).join("\n") : undefined;
  }
  if (source === "receipts") return receipts.get(name);
  if (source === "books") {
    // A transaction by its journal file and the line it starts at (an OFX file's n-th on that line: "#L11.5").
    const m = /^(.+)#L(\d+)(?:\.\d+)?$/.exec(name);
    const file = m && join(SHARED_DATA, "accounting", m[1]!);
    return file && existsSync(file) ? readFileSync(file, "latin1").split("\n")[Number(m[2]) - 1] : undefined;
  }
  if (source === "shop") {
    const [table, id] = name.split("/");
    if (!table || !SHOP_TABLES.has(table)) return undefined;
    const row = shop.query(`SELECT * FROM ${table} WHERE ${table}Id = ?`).get(Number(id)) as Record<string, unknown> | null;
    return row ? Object.values(row).join("\n") : undefined;
  }
  return undefined;
}

const share = (xs: AnswerQuestion[], p: (q: AnswerQuestion) => boolean) => xs.filter(p).length / xs.length;

describe("answer evaluation labels (scripts/eval/answers-labels.json)", () => {
  const { questions, intents } = labels;

  test("at least 150 questions of every source, a quarter or more in the invoices' languages, unique ids", () => {
    expect(questions.length).toBeGreaterThanOrEqual(150);
    expect(new Set([...questions, ...intents].map((q) => q.id)).size).toBe(questions.length + intents.length);
    expect(new Set(questions.map((q) => q.source))).toEqual(new Set(["mail", "invoices", "receipts", "shop", "books"]));
    expect(share(questions, (q) => INVOICE_LANGUAGES.has(q.language))).toBeGreaterThanOrEqual(0.25);
  });

  test("a train and a test half, about even on every source", () => {
    for (const source of ["mail", "invoices", "receipts", "shop", "books"]) {
      const of = questions.filter((q) => q.source === source);
      expect(of.every((q) => q.split === "train" || q.split === "test")).toBe(true);
      expect(share(of, (q) => q.split === "test")).toBeGreaterThanOrEqual(0.4);
      expect(share(of, (q) => q.split === "test")).toBeLessThanOrEqual(0.6);
    }
  });

  test("the issue's phrasings are rows, labelled as the issue says", () => {
    const intent = (question: string) => intents.find((i) => i.question === question);
    for (const q of ["orders over 100 via PayPal", "purchases over 200 through Amazon"]) expect(intent(q)?.amountCondition).toBe(true);
    for (const q of ["What's the story with the VAT?", "What changed in the VAT?"]) expect(intent(q)?.asksAmount).toBe(false);
  });

  test("every fact is written in one of its records (a list: in its records together), as shared/data holds it", () => {
    const shop = new Database(CHINOOK_SQLITE, { readonly: true });
    const wrong: string[] = [];
    for (const q of questions) {
      const texts = q.record.map((key) => recordText(key, shop));
      if (q.record.length === 0 || texts.some((t) => t === undefined)) wrong.push(`${q.id}: no such record in ${q.record.join(", ")}`);
      else if (q.source === "books") {
        if (!q.oracle) wrong.push(`${q.id}: a books fact needs its oracle`);
      }
      // A list may name several rows: its fact is then in their texts together.
      else if (!texts.some((t) => factPattern(q.fact).test(t!)) && !factPattern(q.fact).test(texts.join("\n")))
        wrong.push(`${q.id}: /${q.fact}/ not in ${q.record.join(", ")}`);
    }
    shop.close();
    expect(wrong).toEqual([]);
  });
});
