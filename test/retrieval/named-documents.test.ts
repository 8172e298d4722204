// A document titled (by its heading, else its file's name) with the name a question writes ("the Free invoice":
// free_fiber.pdf) is the one asked about, even where the name is a common word the rare-word
// signal cannot see (evidence.ts NAMED_DOCUMENT_BOOST).
import { expect, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { evidence } from "../../src/retrieval/evidence";
import { fuse } from "../../src/retrieval/fuse";
import { planQuery } from "../../src/retrieval/plan";
import type { RankedChunk } from "../../src/retrieval/types";

const record = (id: string, title: string, type: SourceRecord["type"] = "file", metadata: SourceRecord["metadata"] = {}): SourceRecord => ({
  id,
  title,
  content: "",
  source_url: `corpus://docs/${id}`,
  date: null,
  type,
  path: id,
  metadata,
});
const candidate = (r: SourceRecord, lexical: number, dense: number): RankedChunk => ({
  connectorId: "docs",
  connectorLabel: "Docs",
  owner: "alice",
  record: r,
  chunkIndex: 0,
  text: "",
  score: 0,
  lexical,
  dense,
});

test("the Free invoice among the five shown: its file is named after the name the question writes", () => {
  // Scores as the answer evaluation gave them (invoices-104): receipts and mail holding "customer",
  // "id" and "free" a little ahead by words or meaning, the Free invoice seventh.
  const pool = [
    candidate(record("293.txt", "293.txt"), 1, 0.32),
    candidate(record("FlipkartInvoice.pdf", "FlipkartInvoice.pdf"), 0.523, 0.397),
    candidate(record("198.txt", "198.txt"), 0.96, 0.246),
    candidate(record("324.txt", "324.txt"), 0.843, 0.282),
    candidate(record("m1", "FW: Enron", "email"), 0.455, 0.452),
    candidate(record("296.txt", "296.txt"), 0.618, 0.351),
    candidate(record("free_fiber.pdf", "free_fiber.pdf"), 0.836, 0.265),
  ];
  const ranked = fuse(pool, planQuery("What is the customer id on the Free invoice?")).map((c) => c.record.id);
  expect(ranked.indexOf("free_fiber.pdf")).toBeLessThan(5);
});

test("only a name the question writes, only in a document's own name; not a mail's subject or a table's row", () => {
  const plan = planQuery("By when must the Free invoice be paid?");
  expect(plan.names).toEqual(["free"]);
  const none = evidence(plan, record("other.pdf", "other.pdf"));
  expect(evidence(plan, record("free_fiber.pdf", "free_fiber.pdf"))).toBeGreaterThan(none);
  // Written in lower case, "free" is no name: nothing is added.
  const lower = planQuery("which invoice was free of charge?");
  expect(evidence(lower, record("free_fiber.pdf", "free_fiber.pdf"))).toBe(evidence(lower, record("other.pdf", "other.pdf")));
  expect(evidence(plan, record("m1", "Free trial", "email"))).toBe(evidence(plan, record("m2", "Other", "email")));
  expect(evidence(plan, record("Track/1", "Free Bird", "file", { table: "Track" }))).toBe(
    evidence(plan, record("Track/2", "Other", "file", { table: "Track" })),
  );
});
