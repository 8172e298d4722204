// D31: cutting a record into chunks never runs on the serving thread. A local index stores each
// chunk's text sealed as the reading worker cut it (connectors-011); a question cites a record of
// it from those texts, where it cut the record again (chunk-cache.ts: the tokenizer over up to
// 256 Ki characters of it, ~50 ms of one turn for a long mail in the hostile-sources bench). The
// work is counted: the query service's chunk cache holds what it cut, and stays empty.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { recordChunks } from "../../src/retrieval/chunk";
import { connectorsSettled, tempDir, testApp } from "../helpers";

setDefaultTimeout(120_000);

type App = Awaited<ReturnType<typeof testApp>>;
let t: App;

// ~40 kB: many chunks, the one cited somewhere inside.
const body = Array.from({ length: 400 }, (_, s) =>
  s === 250 ? "The harbour crane inspection moved to the Rotterdam terminal." : `Sentence ${s} about the pipeline capacity auction.`,
).join(" ");
const mail = (id: string, subject: string, text: string) =>
  `Message-ID: <${id}@example.com>\r\nFrom: jeff@example.com\r\nTo: alice@example.com\r\nDate: Tue, 12 Jun 2001 10:00:00 +0000\r\nSubject: ${subject}\r\n\r\n${text}\r\n`;

beforeAll(async () => {
  const roots = tempDir("corpus-cite-stored-");
  const cur = join(roots, "alice", "mail", "cur");
  mkdirSync(cur, { recursive: true });
  writeFileSync(join(cur, "1.long:2,S"), mail("long", "Capacity auction", body));
  writeFileSync(join(cur, "2.short:2,S"), mail("short", "Lunch", "Lunch is at noon on Friday."));
  t = await testApp({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") });
  await t.services.connectors.add("alice", { id: "mail", kind: "maildir", config: { path: join(roots, "alice", "mail") } });
  await connectorsSettled(t.services, "alice");
});

afterAll(async () => {
  await t?.services.close();
});

test("a question cites a local index's record from the chunks it stored, cutting nothing on the serving thread", async () => {
  const outcome = await t.services.query.run({ user: "alice", question: "where did the harbour crane inspection move", perConnector: 5 });
  const cited = outcome.chunks.find((c) => c.record.metadata.message_id === "<long@example.com>");
  expect(cited).toBeDefined();
  // The same chunk as cutting the record gives (the chunk cache's way), and the one asked about.
  const cut = recordChunks(cited!.record, t.services.embeddings.tokenizer);
  expect(cut.length).toBeGreaterThan(3);
  expect(cited!.text).toBe(cut[cited!.chunkIndex]!);
  expect(cited!.text).toContain("Rotterdam");
  // Nothing was cut for it: on main the cache held the long mail's chunks (~20 kB).
  expect(t.services.query.cachedChunkChars).toBe(0);
});
