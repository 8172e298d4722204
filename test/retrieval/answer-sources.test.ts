// Which source answers (D32): a scored decision over sources and statements together, the
// source's ranking score one feature among others (the question's names in its head or text).
import { expect, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { answerSourceOf } from "../../src/retrieval/answer-source";
import { askedOf } from "../../src/retrieval/asked";
import type { RankedChunk } from "../../src/retrieval/types";
import { answerTo } from "../support/answer";

const receipt = (shop: string, total: string) => `${shop} SDN BHD\nJALAN PJU 1A\nCASH BILL\nTOTAL ${total}`;

test("a lower-ranked source the question names answers, not the first one holding an amount", () => {
  const sources = [
    { text: receipt("OLIVE9 PHARMACY", "12.15"), score: 1 },
    { text: receipt("SIN THYE & COMPANY", "45.60"), score: 0.95 },
  ];
  expect(answerTo("How much did I pay at Sin Thye?", [], sources)).toBe("TOTAL 45.60. [2]");
  // Far below the first, it does not: the ranking weighed the sources.
  const far = [sources[0]!, { ...sources[1]!, score: 0.2 }];
  expect(answerTo("How much did I pay at Sin Thye?", [], far)).toBe("TOTAL 12.15. [1]");
});

const ranked = (content: string, text: string, type: SourceRecord["type"] = "email"): RankedChunk => ({
  connectorId: "mail",
  connectorLabel: "Mail",
  owner: "u",
  record: { id: "1", title: "Joe Hirko farewell reception", content, source_url: "x", date: null, type, path: "1", metadata: {} },
  chunkIndex: 1,
  text,
  score: 1,
  lexical: 1,
});

test("a sentence cut by its chunk's end is read whole from the record", () => {
  const content =
    "Joe will be in Houston next week.\n\nPlease drop by the Energizer on Tuesday, August 1 any time between 2:30 and\n4:00 p.m. for an open house in honor of Joe.\n\nHope to see you there!";
  const chunk = "for an open house in honor of Joe.\nHope to see you there!";
  const answer = answerTo("Where is the open house for Joe Hirko?", [], [answerSourceOf(ranked(content, chunk), true)]);
  expect(answer).toContain("Energizer");
  // A long record is read around its cited chunk, not from its start.
  const long = `${"Unrelated weekly news of the gas markets.\n".repeat(500)}${content}`;
  expect(answerSourceOf(ranked(long, chunk), true).text).toContain("Energizer");
  expect(answerSourceOf(ranked(long, chunk), true).text.length).toBeLessThanOrEqual(8_000);
});

test("who is asked of a mail: its signature under a closing says who wrote it", () => {
  const text =
    "A conference call has been set up from 9:30 - 10:30 am Wednesday, October 11 to discuss the roll-out plan for project E-Trans.\nIf you have any questions regarding this call, please give me a call.\nThanks,\nMarcia";
  expect(answerTo("Who set up the E-Trans conference call?", [], [{ text, type: "email" }])).toContain("Marcia");
  // A name alone without a closing above it is no signature; nor is one in a document.
  expect(answerTo("Who set up the E-Trans conference call?", [], [{ text: text.replace("Thanks,\n", ""), type: "email" }])).not.toContain(
    "Marcia",
  );
});

test("a tax written in capitals is what is asked about, not a name", () => {
  expect(askedOf("Ile wynosi kwota VAT na fakturze z Orlenu?")).toMatchObject({ asks: "amount", tax: true });
  expect(askedOf("What was the GST on the Ecosway receipt?")).toMatchObject({ asks: "amount", tax: true });
});

test("who is asked: someone the question does not name; the row the question names answers though no cell reads as a person", () => {
  const mail =
    "I spoke with Governor Geringer's staff person again this past week.\nI saw Steve Reynolds (the govs assistant), today, and told him I would do it.";
  expect(answerTo("Who is Governor Geringer's assistant?", [], [{ text: mail, type: "email" }])).toContain("Steve Reynolds");
  const rows = [
    { text: "Name: Roxanne\nComposer: G M Sumner", metadata: { table: "Track" }, score: 1.7 },
    { text: "Name: Wrote A Song For Everyone\nComposer: J.C. Fogerty", metadata: { table: "Track" }, score: 0.85 },
  ];
  expect(answerTo("Who wrote the track Roxanne?", [], rows)).toContain("Sumner");
});

test("a mail's sentence ending in a colon labels the line after it; an open question is answered from one source", () => {
  const mail = "Hi Steve,\nThe committee decided the following:\nThe price cap stays until the end of the year.\nRegards,\nJane";
  expect(answerTo("What did the committee decide?", [], [{ text: mail, type: "email" }])).toContain("The price cap stays");
  const sources = [
    { text: "The story with the VAT is that the rate went from 19% to 21% in October.", type: "email" as const, score: 1 },
    { text: "VAT questions go to the tax desk.", type: "email" as const, score: 0.9 },
  ];
  expect(answerTo("What's the story with the VAT?", [], sources)).toBe(
    "The story with the VAT is that the rate went from 19% to 21% in October. [1]",
  );
});

test("a forwarded header's time wrapped onto its own line is no date answered", () => {
  const mail =
    "fyi\n---------------------- Forwarded by Steven J Kean/NA/Enron on 04/02/2001\n02:42 PM ---------------------------\nSee last question.";
  expect(answerTo("When is the advisory council meeting?", [], [{ text: mail, type: "email" }])).not.toContain("02:42");
});
