// Copies of one record collapse into the best of them (issue 16: the same message twice in a top
// five). Texts are compared whole only when their first and last characters agree: these cases
// say the shortcut finds every copy it should and no other.
import { expect, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { capPerConnector, collapseCopies } from "../../src/retrieval/copies";
import type { RankedChunk } from "../../src/retrieval/types";

let n = 0;
function ranked(content: string, o: { title?: string; messageId?: string; from?: string; connector?: string } = {}): RankedChunk {
  n++;
  const record: SourceRecord = {
    id: `r${n}`,
    title: o.title ?? "Pipeline capacity",
    content,
    source_url: `corpus://mail/r${n}`,
    date: null,
    type: "email",
    path: `r${n}.eml`,
    metadata: o.messageId ? { message_id: o.messageId, from: o.from ?? "jeff.skilling@enron.com" } : {},
  };
  return {
    connectorId: o.connector ?? "mail",
    connectorLabel: "Mail",
    owner: "alice",
    record,
    chunkIndex: 0,
    text: "",
    score: 1,
    lexical: 0,
  };
}

const long = (middle: string) =>
  `Dear all,\n\n${"The capacity auction closes on Friday at noon. ".repeat(30)}${middle} ${"Please confirm your bids by Thursday. ".repeat(30)}\nRegards`;

test("texts equal but for white space and case are one, the first listing the others", () => {
  const first = ranked(long("Volumes stay as planned."));
  const spaced = ranked(long("Volumes   stay\nas   planned.").replace(/ /g, "  ").toUpperCase());
  const forwarded = ranked(long("Volumes stay as planned."), { title: "FW: Re: Pipeline capacity" });
  const kept = collapseCopies([first, spaced, forwarded]);
  expect(kept).toEqual([first]);
  expect(first.copies).toEqual([spaced.record.source_url, forwarded.record.source_url]);
});

test("texts that share their start and end but not their middle are not copies", () => {
  const a = ranked(long("Volumes stay as planned."));
  const b = ranked(long("Volumes are cut by half."));
  expect(collapseCopies([a, b])).toEqual([a, b]);
});

test("case folding that changes a text's length or a sigma's form still finds the copy", () => {
  const greek = "ΤΟ ΓΡΑΦΕΙΟ ΤΗΣ ΟΔΟΣ ΚΑΙ Η ΣΥΝΑΝΤΗΣΗ ΤΗΣ ΕΒΔΟΜΑΔΑΣ ΓΙΑ ΤΟΝ ΑΓΩΓΟ ΙΣΤΑΝΒΟΥΛ ";
  const upper = ranked(`${"İSTANBUL ".repeat(40)}${greek.repeat(8)}`);
  const lower = ranked(`${"İSTANBUL ".repeat(40)}${greek.repeat(8)}`.toLowerCase());
  expect(collapseCopies([upper, lower])).toEqual([upper]);
});

test("one mail in two folders (the same Message-ID, sender, title and text) is one, however short; other texts under the ID are not", () => {
  const a = ranked("Thanks, see attached.", { messageId: "<1@enron>" });
  const b = ranked("thanks,  see attached.", { messageId: "<1@enron>" });
  const withFooter = ranked("Thanks, see attached.\n-- \nTo unsubscribe write to the list", { messageId: "<1@enron>" });
  const c = ranked("see attached");
  const d = ranked("see attached");
  expect(collapseCopies([a, b, withFooter, c, d])).toEqual([a, withFooter, c, d]);
  expect(a.copies).toEqual([b.record.source_url]);
});

test("attack: another text sent under a real message's Message-ID never hides it", () => {
  // Anyone who saw the thread knows its IDs (In-Reply-To, References), and can write a From.
  const forged = ranked(long("Wire the deposit to account 55-1234 today."), { messageId: "<7@enron>", from: "jeff.skilling@enron.com" });
  const real = ranked(long("Volumes stay as planned."), { messageId: "<7@enron>", from: "jeff.skilling@enron.com" });
  const otherSender = ranked(long("Wire the deposit to account 55-1234 today."), { messageId: "<8@enron>", from: "mallory@example.com" });
  const sameIdOtherSender = ranked("see attached", { messageId: "<9@enron>", from: "mallory@example.com" });
  const realShort = ranked("see attached", { messageId: "<9@enron>" });
  expect(collapseCopies([forged, real, otherSender, sameIdOtherSender, realShort])).toEqual([forged, real, sameIdOtherSender, realShort]);
  expect(forged.copies).toEqual([otherSender.record.source_url]);
  expect(real.copies).toBeUndefined();
  expect(sameIdOtherSender.copies).toBeUndefined();
});

test("at most so many per connector, best first", () => {
  const xs = [ranked(long("1")), ranked(long("2"), { connector: "docs" }), ranked(long("3")), ranked(long("4"))];
  expect(capPerConnector(xs, 2)).toEqual([xs[0]!, xs[1]!, xs[2]!]);
});
