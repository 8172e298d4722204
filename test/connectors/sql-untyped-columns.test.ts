// A SQLite table made with CREATE TABLE … AS SELECT has columns declared without a type; the
// spend an operator maps for "who spent the most" is such a column. Outside walkthrough: it was
// never sorted, and "which customer in Brazil spent the most" named one who spent less.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { ORDER_RANK, ORDERED_BY } from "../../src/connectors/types";
import { tempDir } from "../helpers";

test("a column declared without a type that holds numbers is sorted for 'most' and 'least'; one holding text is not", async () => {
  const file = join(tempDir("corpus-untyped-"), "shop.sqlite");
  const db = new Database(file);
  db.exec("CREATE TABLE purchase (customer TEXT, country TEXT, amount REAL)");
  const put = db.query("INSERT INTO purchase VALUES (?, ?, ?)");
  for (const [customer, country, amount] of [
    ["Alexandre Rocha", "Brazil", 37.62],
    ["Luís Gonçalves", "Brazil", 20],
    ["Luís Gonçalves", "Brazil", 19.62],
    ["Eduardo Martins", "Brazil", 37.62],
  ] as const)
    put.run(customer, country, amount);
  db.exec(
    "CREATE TABLE spend AS SELECT customer, country, sum(amount) AS total_spent, 'n/a' AS note FROM purchase GROUP BY customer, country",
  );
  expect(db.query<{ type: string }, []>("SELECT type FROM pragma_table_info('spend') WHERE name = 'total_spent'").get()!.type).toBe("");
  db.close();
  const c = new SqlConnector({
    url: file,
    tables: [{ name: "spend", id: "customer", title: "customer", text: ["customer", "country", "total_spent", "note"] }],
  });
  try {
    const most = await c.search({ terms: ["spent", "brazil"], phrases: [], limit: 10, order: "desc" });
    expect(most[0]!.title).toBe("Luís Gonçalves");
    expect(most[0]!.metadata).toMatchObject({ [ORDERED_BY]: "total_spent", [ORDER_RANK]: 1 });
    const least = await c.search({ terms: ["spent", "brazil"], phrases: [], limit: 10, order: "asc" });
    expect(Number(least[0]!.metadata.total_spent)).toBe(37.62);
    // A column without a type holding text sorts nothing.
    const byNote = await c.search({ terms: ["note", "brazil"], phrases: [], limit: 10, order: "desc" });
    for (const r of byNote) expect(r.metadata[ORDER_RANK]).toBeUndefined();
  } finally {
    await c.close();
  }
});

test("a view is refused whatever the case its name is written in: its rows are never read (outside attack)", async () => {
  const file = join(tempDir("corpus-untyped-"), "shop.sqlite");
  const db = new Database(file);
  db.exec("CREATE TABLE purchase (customer TEXT, amount REAL)");
  db.exec("CREATE VIEW heavy AS SELECT customer, sum(amount) AS spent FROM purchase GROUP BY customer");
  db.close();
  for (const name of ["heavy", "HEAVY", "Heavy"]) {
    const c = new SqlConnector({ url: file, tables: [{ name, id: "customer", title: "customer", text: ["customer", "spent"] }] });
    try {
      expect(await c.health()).toEqual({ status: "error", reason: `${name} is a view or a virtual table: only plain tables are read` });
    } finally {
      await c.close();
    }
  }
});

test("'the largest invoice billed to Prague': sorted by the one numeric column of the table the question names (outside walkthrough)", async () => {
  const file = join(tempDir("corpus-largest-"), "shop.sqlite");
  const db = new Database(file);
  db.exec("CREATE TABLE invoice (id INTEGER PRIMARY KEY, city TEXT, total REAL)");
  const put = db.query("INSERT INTO invoice VALUES (?, ?, ?)");
  for (const [id, city, total] of [
    [1, "Prague", 3.96],
    [2, "Prague", 25.86],
    [3, "Prague", 5.94],
    [4, "Oslo", 99],
  ] as const)
    put.run(id, city, total);
  db.close();
  const c = new SqlConnector({ url: file, tables: [{ name: "invoice", id: "id", title: "city", text: ["city", "total"] }] });
  try {
    const largest = await c.search({ terms: ["largest", "invoice", "billed", "prague"], phrases: [], limit: 10, order: "desc" });
    expect(largest.map((r) => r.metadata.total)).toEqual([25.86, 5.94, 3.96]);
    expect(largest[0]!.metadata).toMatchObject({ [ORDERED_BY]: "total", [ORDER_RANK]: 1 });
    // A question naming neither the table nor a column sorts nothing.
    const other = await c.search({ terms: ["largest", "prague"], phrases: [], limit: 10, order: "desc" });
    for (const r of other) expect(r.metadata[ORDER_RANK]).toBeUndefined();
  } finally {
    await c.close();
  }
});

test("a size word sorts by a named table's one amount only: not by an id, not for 'the most', not a table the question half names (outside attack)", async () => {
  const { orderColumn } = await import("../../src/connectors/sql/connector");
  expect(orderColumn(["Total"], ["largest", "invoice"], "Invoice")).toBe("Total");
  expect(orderColumn(["customer_id"], ["largest", "customer", "prague"], "customer")).toBeUndefined();
  expect(orderColumn(["Total"], ["customer", "most", "invoices"], "Invoice")).toBeUndefined();
  expect(orderColumn(["Quantity"], ["largest", "invoice"], "InvoiceLine")).toBeUndefined();
});
