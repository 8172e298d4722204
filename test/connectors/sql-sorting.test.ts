// Sorting a mapped table for "most", "least" and "largest". A SQLite table made with CREATE TABLE …
// AS SELECT has columns declared without a type; the spend an operator maps for "who spent the
// most" is such a column. Outside walkthrough: it was never sorted, and "which customer in Brazil
// spent the most" named one who spent less; "the largest invoice billed to Prague" came in date order.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import type { SqlTable } from "../../src/connectors/sql/config";
import { orderColumn, SqlConnector } from "../../src/connectors/sql/connector";
import { ORDER_RANK, ORDERED_BY } from "../../src/connectors/types";
import { tempDir } from "../helpers";

/** A SQLite file made by `statements`. */
function sqliteFile(...statements: string[]): string {
  const file = join(tempDir("corpus-sql-sort-"), "shop.sqlite");
  const db = new Database(file);
  for (const sql of statements) db.exec(sql);
  db.close();
  return file;
}

/** `work` with a connector mapping `table` of `file`, closed after. */
async function withConnector(file: string, table: SqlTable, work: (c: SqlConnector) => Promise<void>): Promise<void> {
  const c = new SqlConnector({ url: file, tables: [table] });
  try {
    await work(c);
  } finally {
    await c.close();
  }
}

const desc = (c: SqlConnector, terms: string[], order: "desc" | "asc" = "desc") => c.search({ terms, phrases: [], limit: 10, order });

test("a column declared without a type that holds numbers is sorted for 'most' and 'least'; one holding text is not", async () => {
  const file = sqliteFile(
    "CREATE TABLE purchase (customer TEXT, country TEXT, amount REAL)",
    "INSERT INTO purchase VALUES ('Alexandre Rocha', 'Brazil', 37.62), ('Luís Gonçalves', 'Brazil', 20), ('Luís Gonçalves', 'Brazil', 19.62), ('Eduardo Martins', 'Brazil', 37.62)",
    "CREATE TABLE spend AS SELECT customer, country, sum(amount) AS total_spent, 'n/a' AS note FROM purchase GROUP BY customer, country",
  );
  const typeOf = new Database(file, { readonly: true });
  expect(typeOf.query<{ type: string }, []>("SELECT type FROM pragma_table_info('spend') WHERE name = 'total_spent'").get()!.type).toBe("");
  typeOf.close();
  await withConnector(
    file,
    { name: "spend", id: "customer", title: "customer", text: ["customer", "country", "total_spent", "note"] },
    async (c) => {
      const most = await desc(c, ["spent", "brazil"]);
      expect(most[0]!.title).toBe("Luís Gonçalves");
      expect(most[0]!.metadata).toMatchObject({ [ORDERED_BY]: "total_spent", [ORDER_RANK]: 1 });
      expect(Number((await desc(c, ["spent", "brazil"], "asc"))[0]!.metadata.total_spent)).toBe(37.62);
      // A column without a type holding text sorts nothing.
      for (const r of await desc(c, ["note", "brazil"])) expect(r.metadata[ORDER_RANK]).toBeUndefined();
    },
  );
});

test("a view is refused whatever the case its name is written in: its rows are never read (outside attack)", async () => {
  const file = sqliteFile(
    "CREATE TABLE purchase (customer TEXT, amount REAL)",
    "CREATE VIEW heavy AS SELECT customer, sum(amount) AS spent FROM purchase GROUP BY customer",
  );
  for (const name of ["heavy", "HEAVY", "Heavy"])
    await withConnector(file, { name, id: "customer", title: "customer", text: ["customer", "spent"] }, async (c) => {
      expect(await c.health()).toEqual({ status: "error", reason: `${name} is a view or a virtual table: only plain tables are read` });
    });
});

test("'the largest invoice billed to Prague': sorted by the one numeric column of the table the question names", async () => {
  const file = sqliteFile(
    "CREATE TABLE invoice (id INTEGER PRIMARY KEY, city TEXT, total REAL)",
    "INSERT INTO invoice VALUES (1, 'Prague', 3.96), (2, 'Prague', 25.86), (3, 'Prague', 5.94), (4, 'Oslo', 99)",
  );
  await withConnector(file, { name: "invoice", id: "id", title: "city", text: ["city", "total"] }, async (c) => {
    const largest = await desc(c, ["largest", "invoice", "billed", "prague"]);
    expect(largest.map((r) => r.metadata.total)).toEqual([25.86, 5.94, 3.96]);
    expect(largest[0]!.metadata).toMatchObject({ [ORDERED_BY]: "total", [ORDER_RANK]: 1 });
    // A question naming neither the table nor a column sorts nothing.
    for (const r of await desc(c, ["largest", "prague"])) expect(r.metadata[ORDER_RANK]).toBeUndefined();
  });
});

test("a size word sorts by a named table's one amount only: not by an id, not for 'the most', not a table the question half names (outside attack)", () => {
  expect(orderColumn(["Total"], ["largest", "invoice"], "Invoice")).toBe("Total");
  expect(orderColumn(["customer_id"], ["largest", "customer", "prague"], "customer")).toBeUndefined();
  expect(orderColumn(["Total"], ["customer", "most", "invoices"], "Invoice")).toBeUndefined();
  expect(orderColumn(["Quantity"], ["largest", "invoice"], "InvoiceLine")).toBeUndefined();
});
