// Attack on the collapse of copies (copies.ts). The rule promises that another text sent under a
// real message's Message-ID never hides it: the same ID needs the same sender and one text the
// other's start. But a From is written by the sender, and the empty text, or any first words of
// the real one ("Dear all,"), is the start of it: a forged mail with that body and a title of the
// attacker's choosing (which ranks it first) hides the real message behind it.
import { expect, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { collapseCopies } from "../../src/retrieval/copies";
import type { RankedChunk } from "../../src/retrieval/types";

let n = 0;
function ranked(
  content: string,
  o: { title?: string; messageId?: string; from?: string; connector?: string; owner?: string; id?: string } = {},
): RankedChunk {
  n++;
  const record: SourceRecord = {
    id: o.id ?? `r${n}`,
    title: o.title ?? "Pipeline capacity",
    content,
    source_url: `corpus://x/r${n}`,
    date: null,
    type: o.messageId ? "email" : "file",
    path: `r${n}`,
    metadata: o.messageId ? { message_id: o.messageId, from: o.from ?? "jeff.skilling@enron.com" } : {},
  };
  return {
    connectorId: o.connector ?? "mail",
    connectorLabel: "Mail",
    owner: o.owner ?? "alice",
    record,
    chunkIndex: 0,
    text: "",
    score: 1,
    lexical: 0,
  };
}

const realBody = `Dear all,\n\n${"The capacity auction closes on Friday at noon. ".repeat(20)}Volumes stay as planned.\nRegards, Jeff`;

test("attack: a forged mail whose body is the real one's first words (or nothing) never hides the real message", () => {
  for (const forgedBody of ["", "   ", "Dear all,", "Dear all, The capacity auction"]) {
    const forged = ranked(forgedBody, { title: "URGENT: wire the deposit to account 55-1234", messageId: "<7@enron>" });
    const real = ranked(realBody, { messageId: "<7@enron>" });
    const kept = collapseCopies([forged, real]);
    expect({ forgedBody, realKept: kept.includes(real) }).toEqual({ forgedBody, realKept: true });
  }
});

test("attack: a record of another owner's connector under the same id never collapses a short record of the user's", () => {
  // Connector ids are the user's own namespace; an operator connector added (operator file, next
  // start) under an id a user already has, or any two owners' records met in one ranking, must not
  // be taken for one record because their short texts have the same record id ("notes.txt").
  const operators = ranked("buy milk", { connector: "docs", owner: "*", id: "notes.txt", title: "notes.txt" });
  const users = ranked("call Bob about the loan", { connector: "docs", owner: "alice", id: "notes.txt", title: "notes.txt" });
  expect(collapseCopies([operators, users])).toEqual([operators, users]);
});

test("attack: two different short records under one record id are two citations; chunks of one short record are one", () => {
  // A short record's copies were found by its record id alone: a record read anew after its text
  // changed (an answer ranking the index's chunk and the live one), or a UID given to another mail,
  // hid the other text behind the first as its "copy".
  const paid = ranked("Invoice 4703: paid.", { id: "INBOX/3", title: "Invoice 4703" });
  const due = ranked("Invoice 4703: 1,234.56 PLN due.", { id: "INBOX/3", title: "Invoice 4703" });
  expect(collapseCopies([paid, due])).toEqual([paid, due]);
  const again = { ...ranked("Invoice 4703: paid.", { id: "INBOX/3", title: "Invoice 4703" }), chunkIndex: 1 };
  const kept = collapseCopies([paid, again]);
  expect(kept).toEqual([paid]);
});

test("held: the same short text in two connectors, and the same Message-ID from another sender, stay apart", () => {
  const a = ranked("see attached", { connector: "mail" });
  const b = ranked("see attached", { connector: "shared" });
  const mine = ranked(realBody, { messageId: "<9@enron>" });
  const theirs = ranked("", { messageId: "<9@enron>", from: "mallory@example.com", title: "URGENT" });
  expect(collapseCopies([a, b, theirs, mine])).toEqual([a, b, theirs, mine]);
});

test("attack: a forged copy cut short (the real text's first 80%, its last lines dropped) never hides the real ending", () => {
  // The same Message-ID, From and title, a text that is the real one's start and 80% of it: a
  // shorter text ranks first (BM25 favours it), and the real message becomes its copy, so the
  // answer quotes a message whose last sentence ("unless the board objects") is gone.
  const head = `Dear all,\n\n${"The capacity auction closes on Friday at noon. ".repeat(20)}`;
  const real = ranked(`${head}We sell the pipeline to Dynegy, unless the board objects on Monday.`, { messageId: "<11@enron>" });
  const forged = ranked(head, { messageId: "<11@enron>" });
  const kept = collapseCopies([forged, real]);
  // Either both are shown, or the one shown holds the whole of the other.
  expect(kept.includes(real)).toBe(true);
});

test("attack: the same short mail in two folders (one Message-ID, sender, title and text) is one message", () => {
  // "Thanks, see attached." filed in Inbox and in Archive: the same message twice, both answered.
  const inbox = ranked("Thanks, see attached.", { messageId: "<12@enron>", id: "INBOX/cur/1", title: "Q3 figures" });
  const archive = ranked("Thanks, see attached.", { messageId: "<12@enron>", id: "Archive/cur/7", title: "Q3 figures" });
  expect(collapseCopies([inbox, archive])).toEqual([inbox]);
});

test("attack: instructions appended to a real body under its Message-ID, From and title never hide the real message", () => {
  // The forged text is the real one and a "P.S." of 20% of it: it ranks first for "account" and
  // the real message becomes its copy, so the answer shows the attacker's words as the sender's.
  // With the test above, no choice of which copy to show is safe: texts that differ stay apart.
  const body = `Dear all,\n\n${"The capacity auction closes on Friday at noon. ".repeat(10)}Regards, Jeff`;
  const real = ranked(body, { messageId: "<13@enron>" });
  const forged = ranked(`${body}\nP.S. Our bank changed: wire the deposit to account 55-1234 from now on.`, { messageId: "<13@enron>" });
  expect(collapseCopies([forged, real]).includes(real)).toBe(true);
});
