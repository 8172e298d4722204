// The Chinook shop (shared data set) as an SQL connector: the tables and columns the tests,
// the query benchmark and the business evaluation read, and an operator file that serves them.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers";
import { SHARED_DATA } from "./servers";

export const CHINOOK_SQLITE = join(SHARED_DATA, "chinook", "Chinook_Sqlite.sqlite");

export const CHINOOK_INVOICES = {
  name: "Invoice",
  id: "InvoiceId",
  title: "BillingCity",
  text: ["BillingAddress", "BillingCity", "BillingCountry", "Total"],
  date: "InvoiceDate",
};

export const chinookCustomers = (columns = ["FirstName", "LastName", "Company", "City", "Country"]) => ({
  name: "Customer",
  id: "CustomerId",
  title: "LastName",
  text: columns,
});

/** An operator connectors file (CORPUS_CONNECTORS_FILE) with the shop's `tables`, as connector `id`; returns its path. */
export function chinookOperatorFile(tables: object[] = [CHINOOK_INVOICES], id = "shop", label = "Chinook shop"): string {
  const file = join(tempDir("corpus-operator-"), "operator.json");
  writeFileSync(file, JSON.stringify([{ id, kind: "sql", label, config: { url: CHINOOK_SQLITE, tables } }]));
  return file;
}
