// The Chinook shop (shared data set) as an SQL connector, once: its tables in SQLite's names
// (Invoice, InvoiceId…, MariaDB's copy too) or in the PostgreSQL copy's (invoice, invoice_id…), the connector record,
// and an operator connectors file. Read by the tests, the benchmarks and the business evaluation.
import { join } from "node:path";
import { SHARED_DATA } from "./servers";
import { operatorFile } from "./sources";

export const CHINOOK_SQLITE = join(SHARED_DATA, "chinook", "Chinook_Sqlite.sqlite");

export type Dialect = "sqlite" | "postgres" | "mysql";

interface Table {
  name: string;
  id: string;
  title: string;
  text: string[];
  date?: string;
}

/** The PostgreSQL copy names each table and column in snake case. */
const snake = (name: string) => name.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();

function named(table: Table, dialect: Dialect): Table {
  if (dialect !== "postgres") return table;
  const { name, id, title, text, date } = table;
  return { name: snake(name), id: snake(id), title: snake(title), text: text.map(snake), ...(date ? { date: snake(date) } : {}) };
}

export const chinookInvoices = (dialect: Dialect = "sqlite") =>
  named(
    {
      name: "Invoice",
      id: "InvoiceId",
      title: "BillingCity",
      text: ["BillingAddress", "BillingCity", "BillingCountry", "Total"],
      date: "InvoiceDate",
    },
    dialect,
  );

export const chinookCustomers = (columns = ["FirstName", "LastName", "Company", "City", "Country"], dialect: Dialect = "sqlite") =>
  named({ name: "Customer", id: "CustomerId", title: "LastName", text: columns }, dialect);

/** The shop's SQLite file as an operator's or a user's connector. */
export const chinookSource = (tables: object[] = [chinookInvoices()], id = "shop", label = "Chinook shop") => ({
  id,
  kind: "sql",
  label,
  config: { url: CHINOOK_SQLITE, tables },
});

/** An operator connectors file with the shop's `tables`. */
export const chinookOperatorFile = (tables: object[] = [chinookInvoices()]) => operatorFile([chinookSource(tables)]);
