// What a question can ask (D32), and the labelled questions the model reads it by: a data file
// (prototypes.json) of questions per kind and per language, as users ask them of mail, invoices,
// receipts, a shop's tables and accounting books. A phrasing, a kind's example or a language is a
// row there; its vectors are then generated again (scripts/asked-vectors.ts, run by the build).
import { createHash } from "node:crypto";
import type { Language } from "../language/words";
import file from "./prototypes.json";

/** The kinds of answer a question asks for; "open" is any other (a number, a reason, terms). */
export const ASKED_KINDS = ["amount", "date", "place", "person", "item", "count", "list", "yes/no", "open"] as const;
export type Asks = (typeof ASKED_KINDS)[number];

/** The languages the prototypes are written in: those of the language tables (words.ts). */
export const PROTOTYPE_LANGUAGES: readonly Language[] = ["en", "nl", "fr", "de", "pl"];

export interface Prototype {
  kind: Asks;
  language: Language;
  text: string;
}

export type PrototypesFile = { note: string; kinds: Record<string, Record<string, string[]>> };

/** Every prototype of `data`, in the file's order; an unknown kind or language is an error of the file. */
export function prototypesOf(data: PrototypesFile = file): Prototype[] {
  return Object.entries(data.kinds).flatMap(([kind, languages]) => {
    if (!(ASKED_KINDS as readonly string[]).includes(kind)) throw new Error(`prototypes: unknown kind ${kind}`);
    return Object.entries(languages).flatMap(([language, texts]) => {
      if (!(PROTOTYPE_LANGUAGES as readonly string[]).includes(language)) throw new Error(`prototypes: unknown language ${language}`);
      return texts.map((text) => ({ kind: kind as Asks, language: language as Language, text }));
    });
  });
}

/** The sha256 of the prototypes' kinds and texts in order: what their stored vectors were computed from. */
export const prototypesDigest = (prototypes: readonly Prototype[]): string =>
  createHash("sha256")
    .update(JSON.stringify(prototypes.map((p) => [p.kind, p.text])))
    .digest("hex");
