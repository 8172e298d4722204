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

test("rows added since are embedded ahead once AHEAD_REFRESH_MS has passed, when the connector is next asked for", async () => {
  const { Database } = await import("bun:sqlite");
  const { copyFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { AHEAD_REFRESH_MS } = await import("../../src/connectors/embed-ahead");
  const { CHINOOK_SQLITE } = await import("../support/chinook");
  const { operatorFile } = await import("../support/sources");
  const { tempDir } = await import("../helpers");
  const { embeddingText, recordChunks } = await import("../../src/retrieval/chunk");
  const file = join(tempDir("corpus-ahead-refresh-"), "shop.sqlite");
  copyFileSync(CHINOOK_SQLITE, file);
  let at = Date.now();
  const t = await testApp(
    { CORPUS_CONNECTORS_FILE: operatorFile([{ id: "shop", kind: "sql", config: { url: file, tables: [chinookCustomers()] } }]) },
    () => at,
  );
  try {
    const { services } = t;
    const settle = async () => {
      await services.connectors.list("alice");
      await connectorsSettled(services, "alice");
      await services.embeddings.idle();
    };
    await settle();
    const db = new Database(file);
    db.exec(
      "INSERT INTO Customer (CustomerId, FirstName, LastName, Company, City, Country, Email, SupportRepId) VALUES (9001, 'Ilse', 'Brandvold', 'Fjord Freight', 'Tromsø', 'Norway', 'ilse@fjord.example', 3)",
    );
    db.close();
    const text = () => {
      const r = {
        title: "Brandvold",
        content: "FirstName: Ilse\nLastName: Brandvold\nCompany: Fjord Freight\nCity: Tromsø\nCountry: Norway",
      };
      return recordChunks(r, services.embeddings.tokenizer).map((c) => embeddingText(r.title, c));
    };
    at += AHEAD_REFRESH_MS - 1;
    await settle();
    expect(services.embeddings.cached("*", text()).filter(Boolean).length).toBe(0);
    at += 1;
    await settle();
    expect(services.embeddings.cached("*", text()).filter(Boolean).length).toBe(1);
  } finally {
    await t.services.close();
  }
});
