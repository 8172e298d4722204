// What is asked, read live by the model (D32): the stored prototypes' vectors are the shipped
// model's (embedded again here through the worker, they agree), and a question the tables read no
// kind of is planned with the model's kind by the query service itself, from the vector it embeds
// for ranking: no data folder embeds the prototypes, and nothing else is embedded for it.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { embeddingModel } from "../../../src/native/assets";
import { storedPrototypes } from "../../../src/retrieval/asked/classify";
import { prototypesOf } from "../../../src/retrieval/asked/prototypes";
import { planQuery } from "../../../src/retrieval/plan";
import { testApp } from "../../helpers";

// The model loads in a worker: longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

let app: Awaited<ReturnType<typeof testApp>>;
beforeAll(async () => {
  app = await testApp();
});
afterAll(async () => {
  await app.services.close();
});

test("the stored vectors are the model's: a sample of the prototypes embedded again agrees with them", async () => {
  const all = prototypesOf();
  const stored = storedPrototypes(embeddingModel.sha256)!;
  const sample = all.map((_, i) => i).filter((i) => i % 25 === 0);
  const fresh = await app.services.embeddings.embed(
    "alice",
    sample.map((i) => all[i]!.text),
  );
  sample.forEach((i, k) => {
    const cosine = stored.vector(i).reduce((s, x, j) => s + x * fresh[k]![j]!, 0);
    expect({ i, close: cosine > 0.995 }).toEqual({ i, close: true });
  });
});

test("a question the tables read no kind of is planned with the model's kind, from the vector embedded for ranking", async () => {
  for (const [question, kind] of [
    ["Remind me what I grabbed at the garden centre.", "item"],
    ["Show me every invoice from the florist.", "list"],
    ["Tell me the street the dentist is on.", "place"],
  ] as const) {
    expect(planQuery(question)).toMatchObject({ asks: "open", by: "none" });
    const embedded = app.services.embeddings.embeddedTexts.urgent;
    const outcome = await app.services.query.run({ user: "alice", question, perConnector: 5 });
    expect({ question, asks: outcome.plan.asks, by: outcome.plan.by }).toEqual({ question, asks: kind, by: "model" });
    // The question's own vector, once: the prototypes are not embedded by the server.
    expect(app.services.embeddings.embeddedTexts.urgent - embedded).toBeLessThanOrEqual(1);
  }
});
