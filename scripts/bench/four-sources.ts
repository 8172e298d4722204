// The four sources of the query benchmarks (issue 16's business user): the Enron maildir, the
// invoices folder, the receipts and the Chinook shop, as the operator connects them; one list for
// scripts/bench/query.ts and scripts/bench/answers-load.ts, so both measure the same index.
import { join } from "node:path";
import { chinookCustomers, chinookInvoices, chinookSource } from "../../test/support/chinook";
import { invoicesFolder } from "./invoices-folder";
import { receiptsFolder } from "./receipts-folder";

/** The shared test data (shared/data beside the repository). */
export const benchData = join(import.meta.dir, "../../../shared/data");

/** The operator's four connectors, their folders made under `work` (kept there between runs). */
export const fourSources = (work: string): object[] => [
  { id: "mail", kind: "maildir", label: "Enron mail", config: { path: join(benchData, "enron", "messages") } },
  { id: "invoices", kind: "files", label: "Invoices", config: { path: invoicesFolder(benchData, work) } },
  { id: "receipts", kind: "files", label: "Receipts", config: { path: receiptsFolder(benchData, work) } },
  chinookSource([chinookInvoices(), chinookCustomers(["FirstName", "LastName", "Company", "Country", "Email"])], "shop", "Chinook"),
];
