// The chunk a document is cited by holds the kind of answer the question asks for. Outside
// walkthrough: "How much did we pay Amazon Web Services in August 2014?" cited the invoice's
// footnote (nearest in meaning), and shape C answered "All AWS Services are sold by Amazon Web Services, Inc.".
import { expect, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { chunkFitFor } from "../../src/retrieval/answer";
import { cite } from "../../src/retrieval/cite";
import { planQuery } from "../../src/retrieval/plan";
import type { RankedChunk } from "../../src/retrieval/types";

const invoice = (type: SourceRecord["type"]): SourceRecord => ({
  id: "aws",
  title: "AmazonWebServices.pdf",
  content: "",
  source_url: "file:///invoices/AmazonWebServices.pdf",
  date: null,
  type,
  path: "AmazonWebServices.pdf",
  metadata: {},
});
const chunks = [
  "Amazon Web Services Invoice Number 12345 Invoice Date August 3, 2014 Total for this invoice $4.11 Amazon Elastic Compute Cloud $3.52",
  "All AWS Services are sold by Amazon Web Services, Inc. This is not a VAT invoice. Please see the Account Activity page for details.",
];
/** The cited text of the record whose nearest chunk by meaning is the footnote (index 1). */
function cited(question: string, type: SourceRecord["type"] = "file"): string {
  const c = { record: invoice(type), chunkIndex: 1, chunks } as unknown as RankedChunk;
  cite([c], ["amazon", "web", "services"], () => chunks, chunkFitFor(planQuery(question)));
  return c.text;
}

test("'how much' cites the chunk with the total; a question of no such kind keeps the chunk nearest in meaning", () => {
  expect(cited("How much did we pay Amazon Web Services in August 2014?")).toBe(chunks[0]!);
  expect(cited("When was the Amazon Web Services invoice issued?")).toBe(chunks[0]!);
  expect(cited("Amazon Web Services terms")).toBe(chunks[1]!);
});

test("a mail is cited by its own words as before, not re-picked by kind", () => {
  expect(cited("How much did we pay Amazon Web Services?", "email")).toBe(chunks[1]!);
});
