// A request the timeout answered 503 while its handler still ran (D17): the handler's own answer
// reaches no one, so a question is not archived (a retry would archive it twice) and the log says
// what was sent, under the request's id (outside attack report: the access line said 200, the
// warning had no request id, and deep_search later found the answer the asker never got).
import { expect, setDefaultTimeout, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { createFetch } from "../../src/server";
import { bearer, testApp } from "../helpers";
import { askedToo, heldSource } from "../support/held-source";
import { steppedClock } from "../support/stepped-clock";
import { freePort } from "../support/tcp";
import { until } from "../support/wait";

setDefaultTimeout(60_000);

const record: SourceRecord = {
  id: "r1",
  title: "Dabhol update",
  content: "The Dabhol plant in India is back online.",
  source_url: "https://x.example/r1",
  date: null,
  type: "file",
  path: "r1",
  metadata: {},
};

test("a question answered 503 by the timeout is not archived, and its access line says 503 under its request id", async () => {
  const port = freePort();
  const t = await testApp({ CORPUS_PORT: String(port), CORPUS_REQUEST_TIMEOUT: "1", CORPUS_LOG_LEVEL: "INFO" });
  const token = (await t.services.auth.issuer.issue("alice", ["corpus:search", "corpus:read"])).token;
  const slow = heldSource([record]);
  askedToo(t, "slow", "Slow", "user", slow.connector);
  const time = steppedClock();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port,
    development: false,
    fetch: createFetch(t.app.fetch, t.config, t.log, time.clock),
  });
  try {
    const answer = fetch(`http://127.0.0.1:${port}/v1/query`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json" },
      body: JSON.stringify({ query: "Dabhol plant", conversation_id: null }),
    });
    await slow.asked;
    time.advance(1_000);
    const r = await answer;
    expect(r.status).toBe(503);
    const requestId = r.headers.get("x-request-id");
    // The handler goes on once its source answers, and archives nothing.
    slow.release();
    await t.services.embeddings.idle();
    const lines = () => t.logs.records().filter((l) => l.request_id === requestId);
    await until("the access line", () => lines().find((l) => l.message === "request"));
    expect(lines().map((l) => [l.message, l.status ?? null])).toEqual([
      ["request timed out", null],
      ["request", 503],
    ]);
    expect(lines()[0]!.client_ip).toBe("127.0.0.1");
    expect(t.db.query<{ n: number }, []>("SELECT count(*) AS n FROM archive_queries").get()!.n).toBe(0);
  } finally {
    server.stop(true);
    await t.services.close();
  }
});
