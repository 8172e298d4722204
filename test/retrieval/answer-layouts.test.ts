// Classes of questions and layouts the answer evaluation's new held-out questions found (D32): a
// tax asked in a polite or a key-word question, or named in the invoice's own language; a row of
// values under its columns' names; an amount printed against its label; a sentence cut after its
// preposition; a web address without its scheme; the net asked; a signature's title; a verb's
// subject after "what did". Each is a class, shown here on text shaped as the data writes it.
import { expect, test } from "bun:test";
import { askedOf } from "../../src/retrieval/asked";
import { asksTaxAmount } from "../../src/retrieval/language/grammar";
import { statementLines } from "../../src/retrieval/statements";
import { answerTo } from "../support/answer";

const ask = (question: string, text: string, type?: "email") => answerTo(question, [], [{ text, ...(type ? { type } : {}) }]);

test("a tax's amount is asked inside a polite question, by key words led by the tax, and by the tax's German names", () => {
  const polite = askedOf("Could you please tell me how much VAT I paid on the Saeco order?");
  expect([polite.asks, polite.tax, polite.focus]).toEqual(["amount", true, ["vat"]]);
  expect(askedOf("Können Sie mir sagen, wie viel MwSt. berechnet wurde?").tax).toBe(true);
  for (const q of ["vat coolblue macbook invoice", "btw saeco factuur", "Wie viel Mehrwertsteuer wurde auf der Rechnung berechnet?"]) {
    expect([q, askedOf(q).asks, askedOf(q).tax]).toEqual([q, "amount", true]);
  }
  // Not the tax's number, nor what was said of it.
  for (const q of ["VAT number Flipkart", "What's the story with the VAT?"]) expect([q, asksTaxAmount(q)]).toEqual([q, false]);
  // A polite question's first word must be one ("Could", "Kunt"): another question's first words are not skipped.
  expect(askedOf("Tot wanneer moet factuur VF1005193039 betaald worden?").focus).not.toContain("factuur");
});

test("a tax named as the invoice names it answers the question's tax: the row under its columns' names, the amount printed against its label", () => {
  const saeco = [
    "Prijzen zijn inclusief BTW Factuur totaal EUR 49,99",
    "BTW % Grondslag BTW bedrag Totaal",
    "21 % 41,31 8,68 49,99",
    "Uw BTW nummer: NL00333599698",
  ].join("\n");
  expect(ask("How much VAT was charged on the Saeco order?", saeco)).toBe("BTW % Grondslag BTW bedrag Totaal 21 % 41,31 8,68 49,99. [1]");
  const free = ["29.995.0024.99Total facture", "5.00TVA 20% payée sur les encaissements", "Free SAS au capital de 3.441.812 Euros"].join(
    "\n",
  );
  expect(ask("Combien de TVA sur la facture Free ?", free)).toBe("TVA 20% payée sur les encaissements: 5.00. [1]");
  const azure = ["Subtotal $ 262.90", "Tax 15% on $ 112.90 $ 16.94", "Total $ 279.84"].join("\n");
  expect(ask("Wie viel Mehrwertsteuer wurde auf der Azure Interior Rechnung berechnet?", azure)).toBe("Tax 15% on $ 112.90 $ 16.94. [1]");
});

test("a row of values is labelled by the names above it only when both are what they look like", () => {
  const read = (text: string) => statementLines({ text }, false).map((s) => [s.text, s.label]);
  expect(read("BTW % Grondslag BTW bedrag Totaal\n21 % 41,31 8,68 49,99")).toEqual([
    ["BTW % Grondslag BTW bedrag Totaal 21 % 41,31 8,68 49,99", "BTW % Grondslag BTW bedrag Totaal"],
  ]);
  // Words under words, or one value under a sentence, are no such row.
  expect(read("Thank you for your order\nPlease come again").length).toBe(2);
  expect(read("Thank you for shopping with us today at our store\n12 3").length).toBe(2);
});

test("the net asked is the net's line, not the total's", () => {
  const netpresse = ["Total HT : 46,68 €", "TVA 20% : 9,34 €", "Total TTC : 56,02 €"].join("\n");
  expect(ask("What is the net amount of the Netpresse invoice before VAT?", netpresse)).toBe("Total HT : 46,68 €. [1]");
  expect(ask("What is the total of the Netpresse invoice?", netpresse)).toBe("Total TTC : 56,02 €. [1]");
});

test("a document's sentence cut after its preposition goes on below; a web address without its scheme is a contact", () => {
  const oyo = ["Note : All Payment to be made in favor of", "Oravel Stays Private Limited", "Bank Name", "HDFC Bank"].join("\n");
  expect(ask("In whose favour must the OYO payment be made?", oyo)).toContain("Oravel Stays Private Limited");
  const aws = [
    "Bill to Address:",
    "ATTN: iViveLabs Limited",
    "Email or talk to us about your AWS account or bill, visit aws.amazon.com/contact-us/",
    "Total for this invoice $4.11",
  ].join("\n");
  expect(ask("Who do I contact about my AWS bill?", aws)).toBe(
    "Email or talk to us about your AWS account or bill, visit aws.amazon.com/contact-us/. [1]",
  );
});

test("asked who, a mail's signature answers with its name and the title under it", () => {
  const mail = [
    "As of this afternoon, the website is up and running.",
    "If you have questions, please contact me.",
    "Kind regards,",
    "Mary M. McCann",
    "Manager, Corporate Communications",
    "Enron Wind Corp.",
  ].join("\n");
  expect(ask("who manages corporate communications at enron wind", mail, "email")).toContain(
    "Mary M. McCann, Manager, Corporate Communications.",
  );
});

test("after 'what did', the noun is the verb's subject: the amount paid is asked, not a person", () => {
  expect(askedOf("What did the customer in Santiago pay in January 2022?").asks).toBe("amount");
  expect(askedOf("Which city was the biggest shop invoice billed to?").asks).toBe("place");
  expect(askedOf("Welke tablet heb ik bij Coolblue gekocht?").asks).toBe("item");
});

test("how something was paid is answered by a means of paying or its label, in each language of the tables, not a line of the shop", () => {
  const receipt = ["GREEN LANE PHARMACY SDN BHD", "TOTAL 180.10", "PAYMENT : 180.10", "CHANGE 180.10", "> VISA", "LEE MEI YEIN"].join("\n");
  expect(ask("How did I pay at Green Lane Pharmacy?", receipt)).toContain("> VISA. [1]");
  const orlen = ["Faktura nr: F 1234K20/1234/12", "Należność ogółem: 316,83 PLN", "Zapłacono: Aplikacja mobilna ORLEN Pay"].join("\n");
  expect(ask("Jak zapłacono za fakturę Orlen?", orlen)).toContain("Zapłacono: Aplikacja mobilna ORLEN Pay. [1]");
});
