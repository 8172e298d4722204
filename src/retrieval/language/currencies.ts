// Currencies as questions and records write them (D32): one row per currency, every pattern that
// reads a currency is built from these rows (a new currency is one row here).
import { anyOf } from "./patterns";

export interface Currency {
  /** ISO 4217 code. */
  iso: string;
  /** Signs, written before a number ("€ 717,97") or after it ("56,02 €"). */
  signs: string[];
  /** Codes and abbreviations as written ("eur", "rs.", "zł"), lower-case. */
  codes: string[];
  /** Names in the languages the data speaks, lower-case ("euros", "ringgit", "złoty"). */
  names: string[];
  /** Its hundredth's names ("cents", "sen"): a currency beside a compared amount, never its code. */
  cents?: string[];
  /** Written forms that name it only right before a number: "$" after one starts the next amount, "rs" alone is a word. */
  onlyBefore?: string[];
  /** "1.000" is a thousand where amounts in it are written so (a dot groups thousands). */
  dotGroupsThousands?: boolean;
}

export const CURRENCIES: Currency[] = [
  { iso: "EUR", signs: ["€"], codes: ["eur"], names: ["euro", "euros"], cents: ["cent", "cents"], dotGroupsThousands: true },
  { iso: "USD", signs: ["$"], codes: ["usd"], names: ["dollar", "dollars"], cents: ["cent", "cents"], onlyBefore: ["$"] },
  { iso: "GBP", signs: ["£"], codes: ["gbp"], names: ["pound", "pounds"] },
  { iso: "PLN", signs: [], codes: ["pln", "zł"], names: ["zloty", "złoty"], dotGroupsThousands: true },
  { iso: "CHF", signs: [], codes: ["chf"], names: [], dotGroupsThousands: true },
  { iso: "INR", signs: ["₹"], codes: ["inr", "rs", "rs."], names: ["rupee", "rupees"], onlyBefore: ["rs", "rs."] },
  // "RM" as receipts print it; amounts.ts reads a record's "Rm" as a room, not ringgit.
  { iso: "MYR", signs: [], codes: ["rm", "myr"], names: ["ringgit"], cents: ["sen"] },
  { iso: "SGD", signs: [], codes: ["sgd"], names: [] },
];

/** Every sign, code and name, lower-case, and its ISO code. */
export const CURRENCY_CODES: Record<string, string> = Object.fromEntries(
  CURRENCIES.flatMap((c) => [...c.signs, ...c.codes, ...c.names].map((w) => [w, c.iso])),
);

/** Every currency as CURRENCY_CODES writes it, longest first, as a pattern (the questions' currencies). */
export const CURRENCY_NAMES = anyOf(Object.keys(CURRENCY_CODES));

const signClass = (signs: string[]) => `[${signs.map((s) => s.replace(/[\\\]^-]/g, "\\$&")).join("")}]`;
/** The signs, as a character class ("[€$£₹]"). */
export const CURRENCY_SIGNS = signClass(CURRENCIES.flatMap((c) => c.signs));
const onlyBefore = new Set(CURRENCIES.flatMap((c) => c.onlyBefore ?? []));
/** Signs and codes that name a currency wherever written: after a number ("4.904,94 €"), or alone in a record ("RM"). */
export const CURRENCY_SIGNS_ANYWHERE = signClass(CURRENCIES.flatMap((c) => c.signs).filter((s) => !onlyBefore.has(s)));
export const CURRENCY_CODES_ANYWHERE = anyOf(CURRENCIES.flatMap((c) => c.codes).filter((s) => !onlyBefore.has(s)));
/** Codes as written before a number, "rs." with its dot. */
export const CURRENCY_CODES_BEFORE = anyOf(CURRENCIES.flatMap((c) => c.codes));
/** A hundredth of a currency ("5 cents"), as a pattern. */
export const CURRENCY_CENTS = anyOf(CURRENCIES.flatMap((c) => c.cents ?? []));
/** Whether "1.000" in `iso` is a thousand. */
export const dotGroupsThousands = (iso: string | undefined) => CURRENCIES.some((c) => c.iso === iso && c.dotGroupsThousands);

/** The codes without a closing dot ("rs." is "rs" and its dot, which patterns allow where it is written). */
const bareCodes = [...new Set(CURRENCIES.flatMap((c) => c.codes.map((x) => x.replace(/\.$/, ""))))];
/** Codes, as a pattern. */
export const CURRENCY_CODE_WORDS = anyOf(bareCodes);
/** Codes and names, as a pattern. */
export const CURRENCY_WORDS = anyOf([...bareCodes, ...CURRENCIES.flatMap((c) => c.names)]);
/** Codes written in capitals against their number, as receipts print them ("RM39.00", "EUR12.00"); "Rs." with its dot. */
export const CODES_AGAINST_NUMBER = anyOf(
  [...CURRENCIES.flatMap((c) => c.codes.filter((x) => x.length === 3)), "rm", "rs."].map((x) => (x === "rs." ? "Rs." : x.toUpperCase())),
);
