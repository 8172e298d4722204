// The shop's rows embedded ahead (src/connectors/embed-ahead.ts) with the real model and the
// Chinook file: the first question ranks them by meaning, none waits to be seen once.
import { expect, test } from "bun:test";
import { connectorsSettled, testApp } from "../helpers";
import { chinookCustomers, chinookInvoices, chinookOperatorFile } from "../support/chinook";

test("the shop's rows are ranked by meaning from the first question: none is 'seen for the first time' once added", async () => {
  const t = await testApp({ CORPUS_CONNECTORS_FILE: chinookOperatorFile([chinookInvoices(), chinookCustomers()]) });
  try {
    const { services } = t;
    // Its status asked, as the connectors list or a first question does: the connector starts.
    await services.connectors.list("alice");
    await connectorsSettled(services, "alice");
    await services.embeddings.idle();
    const outcome = await services.query.run({ user: "alice", question: "customers in Paris", perConnector: 10 });
    const rows = outcome.chunks.filter((c) => c.connectorId === "shop");
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((c) => c.dense !== undefined)).toBe(true);
    expect(outcome.notes.filter((n) => n.includes("seen for the first time"))).toEqual([]);
  } finally {
    await t.services.close();
  }
});
