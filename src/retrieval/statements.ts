// How a document's text becomes statements (D32): its lines read as a mail's wrapped sentences
// joined again, a label with its value below it, a receipt's item with its quantity; the lines
// that carry no answer (headers, boilerplate, contacts) told apart. answer.ts scores them.
import type { SourceRecord } from "../connectors/types";
import { startsQuote } from "./cite";
import { documentDates } from "./document-dates";
import { CURRENCY_CODE_WORDS, CURRENCY_SIGNS, CURRENCY_WORDS } from "./language/currencies";

/** What statements are read from: a source's text, and whether it is a mail. */
export interface StatementSource {
  text: string;
  /** A mail's lines are wrapped prose, joined again before sentences are cut. */
  type?: SourceRecord["type"];
}

/** Sentence ends: a stop before a capital, a digit or a quote ("1:00 p.m. meeting" is one sentence), or a line break. */
export const SENTENCE =
  /(?<=[.!?])(?<!\b(?:Mr|Mrs|Ms|Dr|No|Inc|Co|St|vs|incl|Incl|INCL|excl|Excl|EXCL|inkl|Inkl|[A-Z])\.)\s+(?=["'(\p{Lu}\d])|\n+/u;

/** Lines that carry no answer: mail headers and quoting marks, signatures' phone lines, attachments; an invoice's address, phone, e-mail, web and page lines. */
// Bounded repeats, tried on a sentence's first SENTENCE_PROBE characters: a crafted sentence (a
// long run of letters, or of "a@") made the open-ended ones backtrack quadratically.
const BOILERPLATE = [
  /^\s*(from|to|cc|bcc|sent|date|subject|please respond to|importance|x-[\w-]+)\s*:/i,
  /-{3,}\s*(original message|forwarded by)/i,
  /^\s*>/,
  /<[^>\s@]{1,64}@[^>\s]{1,255}>/,
  /^[\s"]*[\w .'-]{1,80}["]?\s*<?[\w.+-]{1,64}@[\w.-]{1,255}>?\s+on\s+\d/i,
  // A phone number alone on its line; not a date written with dashes or dots ("8-9-2022").
  /^(?!\s*\d{1,4}[-.]\d{1,2}[-.]\d{1,4}\s*$)[\s\d()+.-]{7,}$/,
  /^\s*[\w .-]{1,200}\.(pdf|docx?|xlsx?|pptx?|zip|txt|htm)\s*$/i,
];
/**
 * An invoice's or a signature's contact lines: address, phone, e-mail, web, page count. Never an
 * answer unless the question asks for one (where, a phone, an address, a website, a contact).
 */
export const CONTACT = [
  /^\s*(tel|phone|fax|mobile|gsm|t|f)\.?\s*:?\s*[\d()+][\d\s()+./-]{6,40}$/i,
  // A number and a capitalised street ("4557 De Silva St"), a street and a number ("Hauptstrasse 12").
  /^\s*\d{1,6}[\w/-]{0,6}\s+(\p{Lu}[\p{L}.'-]{0,29}\s+){1,4}(St|Street|Ave|Avenue|Rd|Road|Blvd|Boulevard|Lane|Ln|Dr|Drive|Way|Plaza|Straat|Weg|Laan|Plein|Rue)\b/u,
  /^\s*\p{Lu}[\p{L}.'-]{1,40}(strasse|straße|straat|weg|laan|gasse)\s+\d{1,5}\w?\b/u,
  // A town with its state and ZIP ("Fremont CA 94538"), a Dutch postcode and town alone, a comma-separated address ending in a postcode.
  /\b\p{Lu}[\p{L}.'-]{1,40},?\s+[A-Z]{2}\s+\d{5}(-\d{4})?\s*$/u,
  /^\s*\d{4}\s?[A-Z]{2}\s+\p{Lu}\p{Ll}{1,40}\s*$/u,
  /,.{0,120},\s*\p{Lu}[\p{L} .'-]{1,40}[-–\s]*\d{5,6}\s*$/u,
  /^\s*(e-?mail\s*:?\s*)?[\w.+-]{1,64}@[\w-]{1,63}(\.[\w-]{1,63}){1,8}\s*$/i,
  /^\s*(web(site)?\s*:?\s*)?(https?:\/\/|www\.)\S{1,300}\s*$/i,
  /^\s*page\s*:?\s*\d{1,4}\s*(\/|of)\s*\d{1,4}\s*$/i,
];
/** Contacts inside a line: a phone number, an e-mail address, a web address (each bounded). */
export const CONTACTS_IN_LINE = [
  /\(\d{3}\)[\s-]?\d{3}[\s.-]?\d{4}|\+\d[\d\s().-]{7,18}\d/,
  /[\w.+-]{1,64}@[\w-]{1,63}\.[\w.-]{1,255}/,
  /\b(https?:\/\/|www\.)[\w-]/i,
];
export const SENTENCE_PROBE = 400;
/** A document's own "Date:" line: its date, not a mail header (a document is no mail). */
const DOCUMENT_DATE_LINE = /^\s*date\s*:/i;
/** A forwarded message's sender and time as Notes writes them in a mail ("Rosalee Fleming on 04/02/2001 10:52:12 AM", or the time alone). */
const FORWARDED_AT = /^[\s"]*([\w .'@/-]{1,80}\s+on\s+)?\d{1,2}\/\d{1,2}\/\d{2,4}\s+\d{1,2}:\d{2}(:\d{2})?\s*([AP]M)?\s*$/i;
export const isBoilerplate = (s: string, contactWanted = false, document = false) => {
  // In a document ">" quotes nothing ("> VISA" on a receipt).
  const probe = (document ? s.replace(/^\s*>\s*/, "") : s).slice(0, SENTENCE_PROBE);
  if (!(document && DOCUMENT_DATE_LINE.test(probe)) && BOILERPLATE.some((re) => re.test(probe))) return true;
  if (!document && FORWARDED_AT.test(probe)) return true;
  if (contactWanted) return false;
  // A letterhead's line of several contacts ("Azure Interior. (870)-931-0505 azure@example.com http://…").
  return CONTACT.some((re) => re.test(probe)) || CONTACTS_IN_LINE.filter((re) => re.test(probe)).length >= 2;
};

// Bounded, and a number's run starts where a number does: a line of 100,000 digits was tried from
// each digit (quadratic: 11 s of the request thread per source, outside attack).
/** Money: a currency before or after a number ("€ 717,97", "56,02 €", "316,83 PLN", "RM 538.00"), or a number with cents. */
// Without the u flag, as before: case-insensitive Unicode matching made each line's test slower.
export const MONEY = new RegExp(
  `${CURRENCY_SIGNS}\\s?\\d|(?<![\\d.,])\\d[\\d.,]{0,30}\\s?(${CURRENCY_SIGNS}|${CURRENCY_WORDS}\\b)|\\b${CURRENCY_CODE_WORDS}\\.?\\s?\\d|(?<![\\d.,])\\d{1,3}(?:[.,\\s]?\\d{3}){0,4}[.,]\\d{2}(?![\\d%]|[.,/-]\\d)`,
  "i",
);

/** A mail's line wrapped before its sentence ended: a long line without an end, and a next line going on. */
const WRAPPED = /^.{40,}[^.!?:]$/u;
const GOES_ON = /^[\p{L}\d("']/u;
/** A line that is only an amount ("593.10", "RM 538.00"), or a currency alone ("RM"): on a receipt, the value of the label above it. */
// Before the number a currency only ("MILO 3.50" is an item, not the value of the line above); after it a currency or a tax code ("36.00 SR").
const SIGN_OR_CODE = `(\\p{Sc}|${CURRENCY_CODE_WORDS})`;
const AMOUNT_ONLY = new RegExp(`^${SIGN_OR_CODE}?\\.?\\s?-?\\d[\\d.,]{0,20}\\s?[\\p{Sc}A-Za-z]{0,4}$|^${SIGN_OR_CODE}$`, "iu");

/** A quantity times a price, or a price times a quantity ("7.90 * 3", "3.00 X 3.00", "18 @ 1.98"). */
const QUANTITY = /^\d[\d.,]{0,12}\s?[x*@]\s?\d[\d.,]{0,12}$/i;
/** The longest line taken as the value of a "Label:" line above it. */
const LABELLED_VALUE = 40;
/** The longest line taken as a date alone ("22-9-2022", "28 MAR 2018"). */
const DATE_ALONE = 12;

/**
 * A source's lines as statements: a mail's wrapped lines joined again (a place or a time cut at a
 * line's end was half a sentence), a label and the amount on the line below it as one.
 */
export function statementLines(s: StatementSource, contactWanted: boolean): Array<{ text: string; label?: string; quoted: boolean }> {
  const lines = s.text
    .split("\n")
    .map((x) => x.trim())
    .filter(Boolean);
  const out: Array<{ text: string; label?: string; quoted: boolean }> = [];
  let quoted = false;
  for (const line of lines) {
    // In a mail, what follows a quoted or forwarded message's first line is that message's, not the mail's own.
    if (s.type === "email" && startsQuote(line)) quoted = true;
    // A statement grows to SENTENCE_PROBE characters at most: what is tested of it stays bounded
    // (a label followed by 50,000 amount lines was re-read at each: quadratic, outside attack).
    const lastStatement = out.at(-1);
    const last = lastStatement?.text;
    // A lone ":" between a label and its value ("TOTAL" / ":" / "27.55") belongs to the label.
    if (line === ":" && lastStatement && last !== undefined && last.length < SENTENCE_PROBE) {
      lastStatement.text = `${last}:`;
      continue;
    }
    const joinable = last !== undefined && last.length < SENTENCE_PROBE && !isBoilerplate(last, contactWanted, s.type !== "email");
    const wrapped = joinable && s.type === "email" && WRAPPED.test(last) && GOES_ON.test(line) && !isBoilerplate(line, contactWanted);
    // A label takes the amount below it once ("TOTAL QTY" took its 1, then the next line's 80.91).
    const labelled =
      joinable &&
      ((AMOUNT_ONLY.test(line) && /\p{L}/u.test(last) && !/\d$/.test(last) && !MONEY.test(last)) ||
        // A label and its value below it, as PDFs lay them out ("Invoice Date:" / "03/20/2023").
        (/\p{L}:$/u.test(last) && line.length <= LABELLED_VALUE && !/:$/.test(line)) ||
        // A receipt's quantity under its item ("DOLE PINEAPPLE PCS" / "7.90 * 3").
        (QUANTITY.test(line) && /\p{L}/u.test(last) && !MONEY.test(last)) ||
        // A date alone under a short label without a colon ("Vervaldatum" / "22-9-2022").
        (line.length <= DATE_ALONE && /^\p{L}{3,20}( \p{L}{2,20})?$/u.test(last) && documentDates(line).length > 0));
    if (lastStatement && (wrapped || labelled)) {
      lastStatement.text = `${last} ${line}`;
      // A label is words (a rate at most): "999900245 IKEA RETAI" above its price is an item, not a label.
      if (labelled && !/\d/.test(last!.replace(/\d+(?:[.,]\d+)?\s?%/g, ""))) lastStatement.label = last!.replace(/\s*:$/, "");
    } else out.push({ text: line, quoted });
  }
  return out;
}

/** A labelled line's label, as documents write it ("Invoice Date: 03/20/2023", "Total TTC : 56,02 €"). */
export const LABELLED = /^(\p{L}[\p{L}\d .()/&'-]{0,38}?)\s?:\s*\S|^(\p{L}[\p{L} .()/&'-]{0,30}?)\s+(?=[-€$£(]?\s?\d)/u;
