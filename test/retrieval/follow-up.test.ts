// A conversation's turns (shape C with conversation_id): what a follow-up carries from the turns
// before it. Outside walkthrough: "Which customer in Brazil spent the most?" then "And in France?"
// answered with Brazil's rows, unsorted; outside attack: a third turn, own-language names, "and" questions.
import { expect, test } from "bun:test";
import { planOf } from "../../src/retrieval/search";

const NOW = new Date("2026-11-26T00:00:00Z");
const turn = (question: string, ...context: string[]) => planOf({ user: "alice", question, context, perConnector: 10, now: NOW });

test("a country named replaces the previous turn's, by any of its names; a short turn going on keeps the order, through a third turn", async () => {
  const brazil = "Which customer in Brazil spent the most?";
  const france = await turn("And in France?", brazil);
  expect(france.plan.order).toBe("desc");
  expect(france.terms).toContain("spent");
  expect(france.terms.filter((t) => ["brazil", "brasil", "brasileira"].includes(t))).toEqual([]);
  const germany = await turn("And in Deutschland?", brazil, "And in France?");
  expect(germany.plan.order).toBe("desc");
  expect(germany.terms).toContain("spent");
  expect(germany.terms.filter((t) => ["brazil", "brasil", "france", "française", "français"].includes(t))).toEqual([]);
});

test("a follow-up keeps the previous turn's amount and time unless it says its own; a new question starting with 'and' does not", async () => {
  const first = "Invoices over 100 EUR from Germany in March 2023";
  const france = await turn("And from France?", first);
  expect(france.plan.amounts).toEqual([{ value: 100, currency: "EUR", comparison: "over" }]);
  expect(france.plan.dateFrom?.toISOString()).toBe("2023-03-01T00:00:00.000Z");
  const dentist = await turn("And when is the dentist appointment?", "Which customer in Brazil spent the most?");
  expect([dentist.plan.order, dentist.plan.sourceHint]).toEqual([undefined, undefined]);
  // A turn asking something else keeps none of the previous filters (outside attack).
  for (const other of ["And my passport number?", "And the dentist appointment?", "What about the Netflix invoice?"]) {
    const planned = await turn(other, first);
    expect([other, planned.plan.amounts, planned.plan.dateFrom]).toEqual([other, [], undefined]);
  }
});

test("going on by any country of the shop's: the order stays, the previous country goes; words chain only through turns going on", async () => {
  const brazil = "Which customer in Brazil spent the most?";
  for (const next of ["And in Switzerland?", "And in Czechia?", "And in Canada?", "And in the USA?"]) {
    const planned = await turn(next, brazil);
    expect([next, planned.plan.order, planned.terms.includes("brazil")]).toEqual([next, "desc", false]);
  }
  const guardian = await turn("What did I buy at Guardian?", "Invoices from Coolblue", "dentist phone number", "flight to Oslo");
  expect(guardian.terms.filter((t) => ["coolblue", "dentist"].includes(t))).toEqual([]);
});

test("a long conversation plans its last turns only, and asks no more words than one question may", async () => {
  // Each turn the planning reads is counted: a conversation re-read whole reads all 2,000.
  let read = 0;
  const turns = Array.from({ length: 2_000 }, (_, i) => `invoices of vendor${i} about topic${i}`);
  const context = new Proxy(turns, {
    get: (target, key, receiver) => {
      if (typeof key === "string" && /^\d+$/.test(key)) read++;
      return Reflect.get(target, key, receiver);
    },
  });
  const planned = await planOf({ user: "alice", question: "and vendor7?", context, perConnector: 10, now: NOW });
  expect(read).toBeLessThanOrEqual(10);
  expect(planned.terms.length).toBeLessThanOrEqual(32);
  expect(planned.terms).not.toContain("vendor0");
});
