// Countries named in a question, for sources written in the country's own language: a Polish
// invoice says "Polska" and bills in PLN, never "Poland" (issue 16: "fuel invoice from Poland"
// found shop rows billed to Warsaw, not the Orlen invoice). A country named adds its own names as
// search words, and a record billed in its currency is evidence that it is from there.

export interface Country {
  /** Its English names and adjectives, lower-case. */
  names: string[];
  /** Names in the country's own languages (and their adjective forms), searched beside the English one. */
  ownNames: string[];
  /** ISO 4217 code, and how amounts in it are written. */
  currency: string;
  marks: string[];
}

/** By the English names and adjectives a question uses, lower-case. */
const COUNTRIES: Country[] = [
  { names: ["poland", "polish"], ownNames: ["polska", "polski", "polskie"], currency: "PLN", marks: ["pln", "zł"] },
  { names: ["germany", "german"], ownNames: ["deutschland", "deutsche"], currency: "EUR", marks: ["eur", "€"] },
  { names: ["austria", "austrian"], ownNames: ["österreich"], currency: "EUR", marks: ["eur", "€"] },
  { names: ["netherlands", "holland", "dutch"], ownNames: ["nederland", "nederlandse"], currency: "EUR", marks: ["eur", "€"] },
  { names: ["france", "french"], ownNames: ["française", "français"], currency: "EUR", marks: ["eur", "€"] },
  { names: ["spain", "spanish"], ownNames: ["españa", "española"], currency: "EUR", marks: ["eur", "€"] },
  { names: ["italy", "italian"], ownNames: ["italia", "italiana"], currency: "EUR", marks: ["eur", "€"] },
  { names: ["portugal", "portuguese"], ownNames: ["portuguesa"], currency: "EUR", marks: ["eur", "€"] },
  { names: ["switzerland", "swiss"], ownNames: ["schweiz", "suisse", "svizzera"], currency: "CHF", marks: ["chf"] },
  { names: ["czechia", "czech"], ownNames: ["česko", "česká", "české"], currency: "CZK", marks: ["czk", "kč"] },
  { names: ["sweden", "swedish"], ownNames: ["sverige", "svenska"], currency: "SEK", marks: ["sek"] },
  { names: ["norway", "norwegian"], ownNames: ["norge", "norsk"], currency: "NOK", marks: ["nok"] },
  { names: ["denmark", "danish"], ownNames: ["danmark", "dansk"], currency: "DKK", marks: ["dkk"] },
  { names: ["finland", "finnish"], ownNames: ["suomi"], currency: "EUR", marks: ["eur", "€"] },
  { names: ["brazil", "brazilian"], ownNames: ["brasil", "brasileira"], currency: "BRL", marks: ["brl", "r$"] },
  { names: ["mexico", "mexican"], ownNames: ["méxico", "mexicana"], currency: "MXN", marks: ["mxn"] },
  { names: ["india", "indian"], ownNames: ["bharat"], currency: "INR", marks: ["inr", "₹", "rs."] },
  { names: ["malaysia", "malaysian"], ownNames: [], currency: "MYR", marks: ["myr", "rm"] },
  { names: ["uk", "britain", "british", "england"], ownNames: [], currency: "GBP", marks: ["gbp", "£"] },
  // The rest of the countries the Chinook shop sells to: a follow-up may name any ("And in Canada?").
  { names: ["usa", "america", "american"], ownNames: [], currency: "USD", marks: ["usd"] },
  { names: ["canada", "canadian"], ownNames: [], currency: "CAD", marks: ["cad", "c$"] },
  { names: ["argentina", "argentinian"], ownNames: [], currency: "ARS", marks: ["ars"] },
  { names: ["chile", "chilean"], ownNames: [], currency: "CLP", marks: ["clp"] },
  { names: ["australia", "australian"], ownNames: [], currency: "AUD", marks: ["aud", "a$"] },
  { names: ["belgium", "belgian"], ownNames: ["belgique", "belgië"], currency: "EUR", marks: ["eur", "€"] },
  { names: ["ireland", "irish"], ownNames: ["éire"], currency: "EUR", marks: ["eur", "€"] },
  { names: ["hungary", "hungarian"], ownNames: ["magyarország"], currency: "HUF", marks: ["huf"] },
];

/** The countries a question's words name, each once. */
export function countriesIn(words: string[]): Country[] {
  const said = new Set(words.map((w) => w.toLowerCase()));
  // By its English name or its own ("Deutschland", "Polska"): a follow-up may say either.
  return COUNTRIES.filter((c) => c.names.some((n) => said.has(n)) || c.ownNames.some((n) => said.has(n)));
}

/** Whether `text` holds an amount written in `country`'s currency (its code or sign beside a number). */
export function billedIn(text: string, country: Country): boolean {
  const marks = country.marks.map((m) => m.replace(/[.$]/g, "\\$&")).join("|");
  return new RegExp(`(?:\\d\\s*(?:${marks})(?![\\p{L}])|(?<![\\p{L}])(?:${marks})\\s*\\d)`, "iu").test(text);
}
