// What the plan reads a question asks (asked.ts, D32): once per question, from the language
// tables' rows, shared by citing and answering; and the answer's candidates scored by the named
// features of ANSWER_FEATURES on small inputs.
import { expect, test } from "bun:test";
import { ANSWER_FEATURES, extractiveAnswer } from "../../src/retrieval/answer";
import { askedOf, languageOf } from "../../src/retrieval/asked";
import { planQuery } from "../../src/retrieval/plan";

test("what is asked, by the question word first, then by the first noun of a kind, in each language", () => {
  for (const [q, asks] of [
    ["When is the total amount of the invoice due?", "date"],
    ["Wat is de vervaldatum van de factuur?", "date"],
    ["Was ist das Zahlungsziel der Rechnung?", "date"],
    ["Où se trouve le siège social de Netpresse ?", "place"],
    ["In which city does Robert King live?", "place"],
    ["Kto jest nabywcą na fakturze?", "person"],
    ["Welcher Kunde arbeitet bei Woodstock Discos?", "person"],
    ["How many bags of rice did I buy?", "count"],
    ["Wie hoch ist der Gesamtbetrag der Rechnung?", "amount"],
    ["What did the soya bean drink cost?", "amount"],
    ["Welke tablet heb ik bij Coolblue gekocht?", "item"],
    ["What did I buy at the Office Supplies shop?", "item"],
    ["Which products are on the invoice?", "list"],
    ["What is the serial number of the iPad I bought?", "open"],
    ["Quelle est l'adresse email de l'abonné ?", "open"],
    ["Does Steve want a villa with a tennis court?", "yes/no"],
    // A quantity of a thing counted or measured is a count; "how" alone a way; a plural "which" a list, but of stated terms.
    ["Ile litrów paliwa kupiono na stacji Orlen?", "count"],
    ["Hoeveel stuks heb ik besteld?", "count"],
    ["Welche Zahlungsbedingungen gelten für die Rechnung?", "open"],
    ["What are the opening hours on Sunday?", "open"],
    ["Which flowers did I buy at the florist?", "list"],
    ["Which Chinook employees work in Lethbridge?", "list"],
    ["Which backpack did I buy at Coolblue?", "item"],
    ["Hoe is de factuur betaald?", "open"],
    ["How did I pay at the pharmacy?", "open"],
    ["Jak zapłacono za fakturę?", "open"],
    // "How" before a verb asking what something reads or is called asks by its noun (NAMING_VERBS).
    ["Wie lautet das Rechnungsdatum der QualityHosting-Rechnung?", "date"],
    ["Hoe luidt de vervaldatum van de Saeco factuur?", "date"],
    ["Jak brzmi adres sprzedawcy na fakturze Orlen?", "place"],
    ["Wie heißt der Kunde auf der Rechnung?", "person"],
    ["Wie habe ich die Rechnung bezahlt?", "open"],
    // Spending and a balance ask an amount; a noun of a kind after "which" decides first.
    ["What did the Budapest customer spend on the invoice?", "amount"],
    ["Wat was het saldo van de rekening eind 2015?", "amount"],
    ["Which city was the biggest invoice paid in?", "place"],
    // An address's compound, as Dutch and German write it, asks a place.
    ["Wat is het afleveradres van de bestelling?", "place"],
    ["Was ist die Lieferadresse der Bestellung?", "place"],
  ] as const)
    expect([q, askedOf(q).asks]).toEqual([q, asks]);
});

test("the nuances: a contact asked, a deadline asked, a tax that is what is asked about, the language", () => {
  expect(askedOf("Quelle est l'adresse email de l'abonné ?").contact).toBe(true);
  expect(askedOf("Where is Azure Interior located?").contact).toBe(true);
  expect(askedOf("Who wrote the track?").contact).toBe(false);
  for (const q of [
    "Until when must the invoice be paid?",
    "Tot wanneer moet factuur 12 betaald worden?",
    "Bis wann muss die Rechnung bezahlt werden?",
  ])
    expect([q, askedOf(q).due]).toEqual([q, true]);
  expect(askedOf("When was the invoice issued?").due).toBe(false);
  expect(askedOf("How much VAT was charged on the laptop order?").tax).toBe(true);
  expect(askedOf("Wat was het bedrag exclusief BTW op de factuur?").tax).toBe(false);
  expect([languageOf("Wie hoch ist der Gesamtbetrag der Rechnung?"), languageOf("Wie is de klant van de factuur?")]).toEqual(["de", "nl"]);
  expect(languageOf("Ile wynosi kwota VAT na fakturze?")).toBe("pl");
  // Who wrote, sent or announced something is the sender's; whom someone asked is not.
  for (const [q, author] of [
    ["Who announced Joe Hirko's farewell reception?", true],
    ["Who was the memo sent by?", true],
    ["Wer hat die Einladung geschickt?", true],
    ["Whom has Stelzer asked to speak?", false],
    ["Who is Governor Geringer's assistant?", false],
    ["When was the memo sent?", false],
  ] as const)
    expect([q, askedOf(q).author]).toEqual([q, author]);
});

test("what is asked about: after the question word, up to a preposition; not the names a verb asks by", () => {
  expect(askedOf("What was the total of the Coolblue invoice with the MacBook Pro?").focus).toEqual(["total"]);
  expect(askedOf("Combien de TVA sur la facture Free ?").focus).toEqual(["tva"]);
  expect(askedOf("How much did we pay Amazon Web Services in August 2014?").focus).toEqual(["pai"]);
  expect(askedOf("What did Amazon Glacier cost on the AWS invoice?").focus).toEqual(["amazon", "glacier", "cost"]);
});

test("the plan carries the reading: citing and answering never read the question's text again", () => {
  const plan = planQuery("Tot wanneer moet de Saeco factuur betaald worden?");
  expect([plan.asks, plan.due, plan.language]).toEqual(["date", true, "nl"]);
  expect(plan.names).toContain("saeco");
  // The answer reads the plan only: the same plan answers alike whatever text it came from.
  const text = "Factuurdatum\n8-9-2022\nVervaldatum\n22-9-2022";
  expect(extractiveAnswer(plan, [{ text }])).toBe(extractiveAnswer({ ...plan }, [{ text }]));
});

test("candidates are scored by the named features: each switched off changes what answers", () => {
  const text = "Service A 12 $10.00 $120.00\nSubtotal: $127.50\nBalance Due: $127.50\nPart replaced: capacitor";
  const plan = planQuery("What is the balance due on the invoice?");
  expect(extractiveAnswer(plan, [{ text }])).toBe("Balance Due: $127.50. [1]");
  // Without the features that read the words, the label, the focus and the total, nothing says which amount is the balance due.
  const off = ["label", "focus", "total", "words"] as const;
  const saved = off.map((name) => ANSWER_FEATURES[name].weight);
  try {
    for (const name of off) ANSWER_FEATURES[name].weight = 0;
    expect(extractiveAnswer(plan, [{ text }])).not.toBe("Balance Due: $127.50. [1]");
  } finally {
    off.forEach((name, i) => {
      ANSWER_FEATURES[name].weight = saved[i]!;
    });
  }
  // Every feature has a weight and a reason.
  for (const [name, f] of Object.entries(ANSWER_FEATURES))
    expect([name, Number.isFinite(f.weight), f.reason.length > 20]).toEqual([name, true, true]);
});

test("a table fact is answered with the asked column and the row's identifying cells", () => {
  const row = "FirstName: Jane\nLastName: Peacock\nTitle: Sales Support Agent\nBirthDate: 1973-08-29\nHireDate: 2002-04-01\nCity: Calgary";
  const plan = planQuery("When was Jane Peacock hired?");
  expect(extractiveAnswer(plan, [{ text: row, metadata: { table: "Employee" } }])).toBe(
    "FirstName: Jane; LastName: Peacock; HireDate: 2002-04-01. [1]",
  );
  expect(extractiveAnswer(planQuery("In which city does Jane Peacock live?"), [{ text: row, metadata: { table: "Employee" } }])).toBe(
    "FirstName: Jane; LastName: Peacock; City: Calgary. [1]",
  );
});

test("a receipt's item and its quantity below are one statement; an amount alone says not what it is", () => {
  const receipt = "B.I.G.\nDOLE PINEAPPLE PCS 8809069300708\n7.90 * 3\n23.70 Z\nTOTAL\n23.70";
  expect(extractiveAnswer(planQuery("How many Dole pineapples did I buy at B.I.G.?"), [{ text: receipt }])).toContain("7.90 * 3");
  expect(
    extractiveAnswer(planQuery("What did I buy at K Stationery?"), [{ text: "K STATIONERY\nNAME CARD\n1 X\n148.00\n148.00\nSR" }]),
  ).toBe("NAME CARD 1 X 148.00 148.00 SR. [1]");
});

test("answering writes nothing of a record or a question to the console: the server's output is no log of a user's data", () => {
  const written: unknown[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => written.push(args);
  try {
    extractiveAnswer(planQuery("What is the balance due on the invoice?"), [{ text: "Subtotal: $127.50\nBalance Due: $127.50" }]);
  } finally {
    console.log = log;
  }
  expect(written).toEqual([]);
});

test("'why' asks a reason in each language: the tables read it, the model is not asked (it read 'Why did the gas deal fall through?' as yes/no)", () => {
  for (const q of [
    "Why did the gas deal fall through?",
    "Waarom is de bestelling geannuleerd?",
    "Pourquoi la commande a-t-elle été annulée ?",
    "Wieso wurde das Treffen verschoben?",
    "Dlaczego zamówienie zostało anulowane?",
  ])
    expect({ q, ...askedOf(q) }).toMatchObject({ q, asks: "open", by: "word" });
});
