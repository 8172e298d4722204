// A SQL source's rows hold the question's words as whole words, as the local index matches them:
// each engine's LIKE, GLOB or ~* finds a word inside another ("billed to France" found "319 N.
// Frances Street" and answered with its invoice, the largest; "Mark" found "Denmark").
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { holdsAsWord, SqlConnector } from "../../src/connectors/sql/connector";
import { planQuery } from "../../src/retrieval/plan";
import { tempDir } from "../helpers";

let c: SqlConnector;

beforeAll(() => {
  const path = join(tempDir("corpus-sql-whole-words-"), "shop.sqlite");
  const db = new Database(path);
  db.exec("CREATE TABLE Invoice (InvoiceId INTEGER PRIMARY KEY, BillingAddress TEXT, BillingCountry TEXT, Total REAL)");
  const insert = db.query("INSERT INTO Invoice VALUES (?, ?, ?, ?)");
  for (const row of [
    [1, "319 N. Frances Street", "USA", 18.86],
    [2, "4, Rue Milton", "France", 16.86],
    [3, "8, Rue Hanovre", "France", 5.94],
    [4, "Sønder Boulevard 51", "Denmark", 13.86],
    [5, "8210 111 ST NW, c/o Mark Philips", "Canada", 8.91],
    [6, "Rua Dr. Falcão Filho, 155", "Brazil", 3.96],
  ])
    insert.run(...row);
  db.close();
  c = new SqlConnector({
    url: path,
    tables: [{ name: "Invoice", id: "InvoiceId", title: "BillingAddress", text: ["BillingAddress", "BillingCountry", "Total"] }],
  });
});

afterAll(async () => c.close());

const ask = async (question: string) => {
  const p = planQuery(question);
  return (await c.search({ terms: p.terms, phrases: p.phrases, limit: 10, ...(p.order ? { order: p.order } : {}) })).map((r) => r.id);
};

test("a word is found as a word, not inside another: France is no Frances Street, Mark no Denmark", async () => {
  expect((await ask("invoices billed to France")).sort()).toEqual(["Invoice/2", "Invoice/3"]);
  expect(await ask("invoices of Mark")).toEqual(["Invoice/5"]);
  expect(await ask("Frances Street")).toEqual(["Invoice/1"]);
  // Folded as the index folds words: "falcao" is "Falcão", "sonder" "Sønder" (a word still).
  expect(await ask("Falcao")).toEqual(["Invoice/6"]);
});

test("the largest of the rows holding the word: billed to France, not to Frances Street", async () => {
  expect((await ask("Highest invoice total billed to France?"))[0]).toBe("Invoice/2");
});

test("rows holding a word only inside other words do not hide the rows holding it: more are read until enough hold it whole", async () => {
  const path = join(tempDir("corpus-sql-whole-words-many-"), "shop.sqlite");
  const db = new Database(path);
  db.exec("CREATE TABLE Invoice (InvoiceId INTEGER PRIMARY KEY, BillingAddress TEXT, BillingCountry TEXT, Total REAL)");
  const insert = db.query("INSERT INTO Invoice VALUES (?, ?, ?, ?)");
  insert.run(1, "4, Rue Milton", "France", 16.86);
  insert.run(2, "8210 111 ST NW, c/o Mark Philips", "Canada", 8.91);
  // Newer and larger than either: each holds "France" or "Mark" inside another word alone.
  for (let i = 0; i < 60; i++) insert.run(10 + i, `${300 + i} N. Frances Street, Denmark`, "USA", 100 + i);
  db.close();
  const many = new SqlConnector({
    url: path,
    tables: [{ name: "Invoice", id: "InvoiceId", title: "BillingAddress", text: ["BillingAddress", "BillingCountry", "Total"] }],
  });
  try {
    const ids = async (question: string) => {
      const p = planQuery(question);
      return (await many.search({ terms: p.terms, phrases: p.phrases, limit: 10, ...(p.order ? { order: p.order } : {}) })).map(
        (r) => r.id,
      );
    };
    expect(await ids("invoices of Mark")).toEqual(["Invoice/2"]);
    // Not the table's largest (a Frances Street invoice) for want of a France row among the first read.
    expect((await ids("Highest invoice total billed to France?"))[0]).toBe("Invoice/1");
  } finally {
    await many.close();
  }
});

test("a word is looked for as a word in time linear in the cell: a word of 4,000 'a' in cells of 8,000 'a' costs what a word found nowhere does", () => {
  const cell = "a".repeat(8_000);
  const timed = (word: string) => {
    const started = performance.now();
    for (let i = 0; i < 20; i++) expect(holdsAsWord(cell, word)).toBe(false);
    return performance.now() - started;
  };
  // The best of a few runs of each, taken in turns: the machine's load falls on both.
  const best = [Infinity, Infinity];
  for (let run = 0; run < 5; run++) {
    best[0] = Math.min(best[0]!, timed("b".repeat(4_000)));
    best[1] = Math.min(best[1]!, timed("a".repeat(4_000)));
  }
  // Searched at each of 4,000 places, the hostile word compares ~4,000 times as many characters.
  expect(best[1]! / Math.max(best[0]!, 1)).toBeLessThan(20);
  // Folded by the caller (foldText), as the index folds words.
  expect(holdsAsWord("c/o mark philips", "mark")).toBe(true);
  expect(holdsAsWord("denmark", "mark")).toBe(false);
  expect(holdsAsWord("aab aaab", "aaab")).toBe(true);
  expect(holdsAsWord("xaaab", "aaab")).toBe(false);
});
