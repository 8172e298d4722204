// A short question's rare words (a vendor's or a shop's name, which the model cannot read) weigh
// in the fused score. Outside walkthrough: "What is the total of the Netpresse invoice?" put a
// document titled "Invoice" first, nearer by meaning and by the common words than the Netpresse invoice.
import { expect, test } from "bun:test";
import type { ActiveConnector } from "../../src/connectors/registry";
import type { Connector, SourceRecord } from "../../src/connectors/types";
import { countWords } from "../../src/retrieval/bm25";
import { fuse, RARE_BOOST } from "../../src/retrieval/fuse";
import { planQuery } from "../../src/retrieval/plan";
import { leadingName, markRareWords, namesIn, rareWordsApply } from "../../src/retrieval/rare-words";
import { type Scoring, scoreCandidates } from "../../src/retrieval/score";
import type { Question, RankedChunk } from "../../src/retrieval/types";
import { mailRecord } from "../support/mail-record";

const candidate = (id: string, lexical: number, dense: number): RankedChunk => {
  const record: SourceRecord = {
    id,
    title: id,
    content: "",
    source_url: `file:///docs/${id}`,
    date: null,
    type: "file",
    path: id,
    metadata: {},
  };
  return { connectorId: "docs", connectorLabel: "Docs", owner: "alice", record, chunkIndex: 0, text: "", score: 0, lexical, dense };
};
const texts = [
  "Invoice Invoice Service A 12 $10.00 Total $127.50",
  "NETPRESSE Facture n° 2022089083 Total TTC : 56,02 €",
  ...Array.from({ length: 10 }, (_, i) => `Invoice ${i} Total due $${i}.00 for hosting`),
];

test("the candidates holding a short question's rare words are marked; the others are not", () => {
  const pool = texts.map((_, i) => candidate(`doc${i}`, 0.5, 0.5));
  markRareWords(pool, countWords(texts, ["total", "netpresse", "invoice"]), ["total", "netpresse", "invoice"]);
  expect(pool.map((c) => c.rare ?? 0)).toEqual([0, 1, ...Array(10).fill(0)]);
});

test("no marks for a long question (its words' BM25 weighs them already), a one-word question or a small pool", () => {
  for (const [terms, pool] of [
    [["total", "netpresse", "invoice", "hosting", "service"], texts],
    [["netpresse"], texts],
    [["total", "netpresse"], texts.slice(0, 5)],
  ] as const) {
    const scored = pool.map((_, i) => candidate(`doc${i}`, 0.5, 0.5));
    markRareWords(scored, countWords([...pool], [...terms]), [...terms]);
    expect(scored.every((c) => c.rare === undefined)).toBe(true);
  }
});

test("the Netpresse invoice outranks the nearer 'Invoice' once its rare word counts", () => {
  const invoice = candidate("Invoice", 0.6, 0.62);
  const netpresse = { ...candidate("NetpresseInvoice.pdf", 0.5, 0.6), rare: 1 };
  const ranked = fuse([invoice, netpresse], planQuery("What is the total of the Netpresse invoice?"));
  expect(ranked.map((c) => c.record.id)).toEqual(["NetpresseInvoice.pdf", "Invoice"]);
  // Its words and meaning alone left it second: the rare word decides.
  expect(netpresse.score - invoice.score).toBeLessThan(RARE_BOOST);
});

test("a rare word the question writes as a name counts once more (outside walkthrough: 'How much did Orlen invoice?' put the Orlen invoice second)", () => {
  expect([...namesIn("How much did Orlen invoice?")]).toEqual(["orlen"]);
  // As words are compared: stemmed.
  expect([...namesIn("NETPRESSE invoice")]).toEqual(["netpress"]);
  expect([...namesIn("How much did I spend at Nando's?")]).toEqual(["nando"]);
  // A few key words in capitals are names still.
  expect([...namesIn("COOLBLUE INVOICE TOTAL")]).toEqual(["coolblu", "invoic", "total"]);
  const pool = texts.map((_, i) => candidate(`doc${i}`, 0.5, 0.5));
  const terms = ["total", "netpresse", "invoice"];
  markRareWords(pool, countWords(texts, terms), terms, namesIn("What is the total of the Netpresse invoice?"));
  expect(pool.map((c) => c.rare ?? 0)).toEqual([0, 4, ...Array(10).fill(0)]);
});

test("a question all in capitals or with every word capitalised names nothing by them (outside attack: 'How Much Did I Spend At Nando's?')", () => {
  expect(namesIn("How Much Did I Spend At Nando's?").size).toBe(0);
  expect(namesIn("HOW MUCH DID I SPEND AT NANDO'S?").size).toBe(0);
  expect([...namesIn("How much did I spend at Nando's?")]).toEqual(["nando"]);
});

test("the name of a tax is no rare word: 'What was the VAT on the Coolblue invoice?' is about Coolblue's invoice, not a record explaining VAT (outside walkthrough)", () => {
  const pool = [
    "Amazon Web Services Invoice. * May include estimated US sales tax, VAT, GST and CT. ** This is not a VAT invoice.",
    "Coolblue B.V. Factuur. Subtotaal € 717,97 Exclusief BTW € 593,36 BTW 21% € 124,61 Totaal € 717,97",
    ...Array.from({ length: 10 }, (_, i) => `Invoice ${i} Total due $${i}.00 for hosting`),
  ];
  const question = "What was the VAT on the Coolblue invoice?";
  const plan = planQuery(question);
  // Their word and meaning scores as the walkthrough's question logged them: the VAT record's words
  // (VAT, Invoice, many times) scored best.
  const aws = candidate("AmazonWebServices.pdf", 1, 0.3953);
  const coolblue = candidate("coolblue1.pdf", 0.1524, 0.3522);
  const scored = [aws, coolblue, ...pool.slice(2).map((_, i) => candidate(`doc${i}`, 0.05, 0.3))];
  markRareWords(scored, countWords(pool, plan.terms), plan.terms, namesIn(question));
  expect(aws.rare).toBe(0);
  expect(coolblue.rare).toBeGreaterThan(1);
  expect(
    fuse(scored, plan)
      .map((c) => c.record.id)
      .slice(0, 2),
  ).toEqual(["coolblue1.pdf", "AmazonWebServices.pdf"]);
});

test("a keyword question's first word, capitalised, is the name it asks about when it is rare ('Bemed pharmacy receipt' put two other pharmacies' receipts above Bemed's)", () => {
  expect(leadingName("Bemed pharmacy receipt")).toEqual(["beme"]);
  expect(leadingName("Coolblue order invoices")).toEqual(["coolblu"]);
  // A kind of record is no name, nor a first word in lower case.
  expect(leadingName("Invoices from 2014")).toEqual([]);
  expect(leadingName("bemed pharmacy receipt")).toEqual([]);
  const receipts = [
    "BEMED (SP) SDN. BHD. SUBANG PERDANA receipt total",
    "AA PHARMACY SUBANG HEALTHCARE receipt total",
    ...Array.from({ length: 10 }, (_, i) => `SHELL ${i} receipt total`),
  ];
  const terms = ["bemed", "pharmacy", "receipt"];
  const mark = (names: Set<string>) => {
    const pool = receipts.map((_, i) => candidate(`r${i}`, 0.5, 0.5));
    markRareWords(pool, countWords(receipts, terms), terms, names);
    return pool.map((c) => c.rare ?? 0).slice(0, 2);
  };
  // By namesIn alone, each holds one of the two rare words: alike.
  expect(mark(namesIn("Bemed pharmacy receipt"))).toEqual([0.5, 0.5]);
  expect(mark(new Set([...namesIn("Bemed pharmacy receipt"), ...leadingName("Bemed pharmacy receipt")]))).toEqual([3.5, 0.5]);
  // A question's first word is a question word, never a rare one: nothing more is marked.
  const question = "What did the pharmacy receipt say?";
  expect(mark(new Set([...namesIn(question), ...leadingName(question)]))).toEqual(mark(namesIn(question)));
});

test("a long record holding the rare words past the pool's window of its text is marked as holding them", () => {
  // A news digest names the senator in a story far down, as "IEP News 4/20" (67 K characters) did.
  const mail = mailRecord;

  const stories = Array.from({ length: 200 }, (_, i) => `Story ${i}: the legislature met on power prices again today.`).join(" ");
  const hits = [
    mail("digest", "News 4/20", `${stories} Senator Dunn opened the hearing on market manipulation.`),
    mail("short", "Letter", "Senator Dunn has our letter."),
    ...Array.from({ length: 10 }, (_, i) => mail(`other${i}`, `Note ${i}`, `The senator spoke at a hearing ${i}.`)),
  ];
  expect(hits[0]!.content.indexOf("Dunn")).toBeGreaterThan(6000);
  const question = "Senator Dunn hearing";
  const plan = planQuery(question);
  const a: ActiveConnector = {
    id: "imap",
    kind: "imap",
    label: "Mail",
    owner: "user",
    datesAreFileTimes: false,
    connector: {} as Connector,
  };
  const q = { options: { user: "alice", question, perConnector: 12 }, plan, terms: plan.terms } as unknown as Question;
  const scoring = { chunksOf: (_o: string, _c: string, r: SourceRecord) => [r.content] } as unknown as Scoring;
  const { pool } = scoreCandidates(q, [a], [{ status: "fulfilled", value: { a, hits: hits.map((record) => ({ record })) } }], scoring);
  const rare = new Map(pool.map((c) => [c.record.id, c.rare ?? 0]));
  expect(rare.get("short")).toBeGreaterThan(0);
  expect(rare.get("digest")).toBe(rare.get("short"));
  expect(rare.get("other0")).toBe(0);
});

test("the days a question writes are not what it is about: a shop named beside a day is a short question's rare word, a month no name", () => {
  const plan = planQuery("What was the total at AEON Taman Maluri on 22 April 2018?");
  // Searched as receipts write them, but no name: the receipt of that day writes 22/04/2018.
  expect(plan.terms).toContain("april");
  expect(plan.names).toEqual(["aeon", "taman", "maluri"]);
  expect(rareWordsApply(plan.terms, 20, plan.dayWords)).toBe(true);
  // The same words without the day asked are as long as before: a long question's BM25 weighs them.
  expect(rareWordsApply(plan.terms, 20)).toBe(false);
  // A date that is part of what is sought ("Tokyo Presentation 15 May") is a word of its subject.
  expect(planQuery("Where are the slides of Tokyo Presentation 15 May?").dayWords).toBeUndefined();
});

test("German capitalises every noun: a word of the language tables is no name, the vendor is ('Saeco-Rechnung')", () => {
  expect([...namesIn("Bis wann ist die Saeco-Rechnung fällig?", "de")]).toEqual(["saeco"]);
  expect([...namesIn("Wie viel Wechselgeld bekam ich bei FamilyMart?", "de")]).toEqual(["familymart"]);
  expect(planQuery("Wie hoch ist der Gesamtbetrag der Netpresse-Rechnung?").names).toEqual(["netpress"]);
  // Elsewhere a capitalised word is still a name.
  expect([...namesIn("What is the Total Gesamtbetrag?")]).toEqual(["total", "gesamtbetrag"]);
});

test("a question's fillers in the invoices' languages are never searched: 'Do kiedy trzeba zapłacić fakturę Sammy Maystone?' is a short question", () => {
  const terms = (q: string) => planQuery(q).terms;
  expect(terms("Do kiedy trzeba zapłacić fakturę Sammy Maystone?")).toEqual(["zapłacić", "fakturę", "sammy", "maystone"]);
  expect(terms("Bis wann muss die QualityHosting Rechnung bezahlt werden?")).toEqual(["qualityhosting", "rechnung", "bezahlt"]);
  expect(terms("Tot wanneer moet factuur VF1005193039 betaald worden?")).toEqual(["factuur", "vf1005193039", "betaald"]);
  expect(terms("Où se trouve le magasin Amtech Electrical Supplies ?")).not.toContain("se");
});
