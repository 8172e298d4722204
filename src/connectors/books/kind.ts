// `books` (D34): accounting journals, one file or a folder of them, indexed locally; a
// transaction's date is what a question's dates mean, so they narrow it.
import { basename, dirname } from "node:path";
import { Type } from "@sinclair/typebox";
import { defineKind } from "../kind";
import { BooksConnector } from "./connector";
import { bookFormatOf } from "./format";

export const BooksConfig = Type.Object(
  { path: Type.String({ minLength: 1, maxLength: 4096, description: "absolute path of a journal file, or of a folder of them" }) },
  { additionalProperties: false },
);

export const booksKind = defineKind({
  title: "Accounting books (beancount, Ledger, hledger, GnuCash, QIF, OFX)",
  schema: BooksConfig,
  indexedLocally: true,
  datesAreFileTimes: false,
  create: ({ path }, context) => {
    // A journal file is read as the one file of its folder: the folder is scanned for it alone.
    const file = bookFormatOf(path) ? basename(path) : undefined;
    const folder = file ? dirname(path) : path;
    return new BooksConnector(folder, context.index(), { ...context.indexed, check: context.check }, file);
  },
  localPath: () => "path",
  form: [{ name: "path", label: "Journal file or folder", input: "text", placeholder: "/srv/corpus/books" }],
});
