// What is asked, without the model and with given vectors (D32): without a vector the language
// tables read the question as the plan does (askedOf); the classifier scores a kind by its nearest
// prototypes (not by one lucky neighbour); the tables' kind stands where they read one; a tax's
// amount is the grammar's, not the model's.
import { expect, test } from "bun:test";
import { askedOf } from "../../../src/retrieval/asked";
import { askedWithModel } from "../../../src/retrieval/asked/asked";
import { AskedPrototypes, NEAREST_PER_KIND } from "../../../src/retrieval/asked/classify";
import type { AskedKind, Prototype } from "../../../src/retrieval/asked/prototypes";

/** A unit vector in `dims` dimensions leaning to axis `axis` by `lean` (the rest spread on axis 0). */
function leaning(axis: number, lean: number, dims = 4): Float32Array {
  const v = new Float32Array(dims);
  v[axis] = lean;
  v[0] = (v[0] ?? 0) + Math.sqrt(1 - lean * lean);
  return v;
}
const proto = (kind: AskedKind, text: string = kind): Prototype => ({ kind, language: "en", text });

test("without a vector, the tables read the kind and the plan's reading comes along", () => {
  for (const [question, kind] of [
    ["When is the Acme invoice due?", "date"],
    ["Where is the supplier located?", "place"],
    ["How much VAT did I pay at the pharmacy?", "amount"],
    ["What did I buy at the garden centre?", "item"],
    ["Who signed the lease?", "person"],
    ["Tell me about the lease", "open"],
  ] as const) {
    const asked = askedWithModel(question);
    expect({ question, kind: asked.asks, by: asked.by }).toEqual({ question, kind, by: "tables" });
    expect(asked).toEqual({ ...askedOf(question), by: "tables" });
  }
});

test("a kind is scored by the mean of its nearest prototypes: one close prototype of another kind does not outvote three", () => {
  expect(NEAREST_PER_KIND).toBe(3);
  // Against the question [1, 0, 0], a prototype's cosine is its first coordinate.
  const at = (cos: number) => new Float32Array([cos, Math.sqrt(1 - cos * cos), 0]);
  const prototypes = new AskedPrototypes(
    [proto("person"), proto("person"), proto("person"), proto("date"), proto("date"), proto("date"), proto("date")],
    [at(0.8), at(0.8), at(0.8), at(0.9), at(0.3), at(0.3), at(0.1)],
  );
  const read = prototypes.classify(new Float32Array([1, 0, 0]));
  expect(read.kind).toBe("person");
  expect(read.runnerUp).toBe("date");
  // Person 0.8, date (0.9 + 0.3 + 0.3) / 3 = 0.5: the fourth date prototype is not counted.
  expect(read.confidence).toBeCloseTo(0.3, 5);
});

test("the tables' kind stands where they read one; the model's where they read none", () => {
  const prototypes = new AskedPrototypes([proto("person"), proto("date")], [leaning(1, 0.9), leaning(2, 0.9)]);
  const towardPerson = leaning(1, 0.99);
  expect(askedWithModel("When did the contract start?", towardPerson, prototypes)).toMatchObject({ asks: "date", by: "tables" });
  const read = askedWithModel("Tell me about the lease", towardPerson, prototypes);
  expect(read).toMatchObject({ asks: "person", by: "model", runnerUp: "date" });
  const dated = askedWithModel("Tell me about the lease", leaning(2, 0.99), prototypes);
  expect(dated).toMatchObject({ asks: "date", by: "model" });
});

test("a question naming a tax is an amount only when the grammar reads one: the model's amount gives way to its runner-up", () => {
  const prototypes = new AskedPrototypes([proto("amount"), proto("open")], [leaning(1, 0.9), leaning(2, 0.9)]);
  const towardAmount = leaning(1, 0.99);
  expect(askedWithModel("What's the story with the VAT?", towardAmount, prototypes)).toMatchObject({
    asks: "open",
    runnerUp: "amount",
  });
  expect(askedWithModel("What's the story with the invoice?", towardAmount, prototypes)).toMatchObject({ asks: "amount" });
  expect(askedWithModel("How much VAT was on the invoice?", leaning(2, 0.99), prototypes)).toMatchObject({ asks: "amount", by: "tables" });
});

test("the nearest per kind are found in whatever order the prototypes come: the same kinds and margins as sorting every cosine", () => {
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31 - 0.5;
  };
  const unit = () => {
    const v = Float32Array.from({ length: 8 }, random);
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  };
  const kinds: AskedKind[] = ["amount", "date", "person", "open"];
  const protos = Array.from({ length: 60 }, (_, i) => proto(kinds[i % kinds.length]!, `p${i}`));
  const vectors = protos.map(unit);
  const prototypes = new AskedPrototypes(protos, vectors);
  for (let q = 0; q < 50; q++) {
    const v = unit();
    const cos = (p: Float32Array) => p.reduce((s, x, i) => s + x * v[i]!, 0);
    const scores = kinds
      .map((kind) => {
        const top = protos.flatMap((p, i) => (p.kind === kind ? [cos(vectors[i]!)] : [])).sort((a, b) => b - a);
        return { kind, score: top.slice(0, NEAREST_PER_KIND).reduce((a, b) => a + b, 0) / NEAREST_PER_KIND };
      })
      .sort((a, b) => b.score - a.score);
    const read = prototypes.classify(v);
    expect(read.kind).toBe(scores[0]!.kind);
    expect(read.runnerUp).toBe(scores[1]!.kind);
    expect(read.confidence).toBeCloseTo(scores[0]!.score - scores[1]!.score, 5);
  }
});
