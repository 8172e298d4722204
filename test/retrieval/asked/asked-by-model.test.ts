// askedOf with a question's vector (D32): where the tables read no kind, the model's nearest
// prototypes decide, and the kind's own flags follow (a sender asked); a kind the tables read by
// a question word or a noun stands whatever the vector says; a tax's amount is the grammar's, not
// the model's; another model's vector, or none, leaves the tables' reading. The vectors here are
// the stored prototypes' own (the model's, computed by the build), so no model is loaded.
import { expect, test } from "bun:test";
import { embeddingModel } from "../../../src/native/assets";
import { askedOf, MODEL_MARGIN } from "../../../src/retrieval/asked";
import { storedPrototypes } from "../../../src/retrieval/asked/classify";
import { type Asks, prototypesOf } from "../../../src/retrieval/asked/prototypes";

const all = prototypesOf();
const stored = storedPrototypes(embeddingModel.sha256)!;
/** The meaning of the first English prototype of `kind` that the model itself reads as that kind, surely. */
function meaningOf(kind: Asks) {
  const i = all.findIndex((p, i) => {
    if (p.kind !== kind || p.language !== "en") return false;
    const read = stored.classify(stored.vector(i));
    return read.kind === kind && read.margin >= 2 * MODEL_MARGIN;
  });
  return { vector: stored.vector(i), model: embeddingModel.sha256 };
}

test("where the tables read no kind, the model's decides; without a vector they read it as before", () => {
  for (const [question, kind] of [
    ["Remind me about the thing from last week", "date"],
    ["The lease, tell me more.", "place"],
    ["And in France?", "count"],
  ] as const) {
    expect(askedOf(question)).toMatchObject({ asks: "open", by: "none" });
    expect(askedOf(question, meaningOf(kind))).toMatchObject({ asks: kind, by: "model" });
  }
});

test("a kind read by the model brings its own flags: who wrote a mail is its sender, a place is reached by contact lines", () => {
  const question = "The mail about the budget was written by?";
  expect(askedOf(question)).toMatchObject({ asks: "open", author: false });
  expect(askedOf(question, meaningOf("person"))).toMatchObject({ asks: "person", author: true, by: "model" });
  expect(askedOf("The lease, tell me more.", meaningOf("place"))).toMatchObject({ contact: true });
});

test("a kind the tables read by a question word or a noun stands, whatever the vector", () => {
  expect(askedOf("When did the parcel arrive?", meaningOf("place"))).toMatchObject({ asks: "date", by: "word" });
  expect(askedOf("What was the total of the lease invoice?", meaningOf("person"))).toMatchObject({ asks: "amount", by: "noun" });
  expect(askedOf("The VAT on the lease, please.", meaningOf("date"))).toMatchObject({ asks: "amount", by: "word" });
});

test("a tax's amount is the grammar's: where the model reads an amount of a question naming a tax, its runner-up answers", () => {
  const read = askedOf("What's the story with the VAT?", meaningOf("amount"));
  expect(read.by).toBe("model");
  expect(read.asks).not.toBe("amount");
  expect(askedOf("What's the story with the rent?", meaningOf("amount")).asks).toBe("amount");
});

test("another model's vector is not compared with the prototypes: the tables read alone", () => {
  const other = { ...meaningOf("date"), model: "f".repeat(64) };
  expect(askedOf("Remind me about the thing from last week", other)).toMatchObject({ asks: "open", by: "none" });
});
