// Attack: a cited text longer than a snippet, with an emoji (two UTF-16 code units) or a
// grapheme of several code points where the snippet is cut. `text.slice(0, 597)` cuts between
// the two halves of a surrogate pair: the JSON then carries a lone "\ud83d", which a client in
// Python cannot even print (UnicodeEncodeError) and a strict UTF-8 decoder refuses.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bearer, connectorsSettled, postJson, tempDir, testApp } from "../helpers";

setDefaultTimeout(120_000);

type App = Awaited<ReturnType<typeof testApp>>;
let t: App;
let token: string;

/** A body whose code unit 596 (the last a 600-unit snippet keeps before its "...") is the first half of an emoji. */
function body(): string {
  let text = "The lighthouse ledger is ready.";
  while (text.length < 596) text += " lighthouse";
  text = text.slice(0, 595);
  text += " \u{1F600} and the lighthouse keeper signed the ledger on Friday.";
  return text;
}

beforeAll(async () => {
  const roots = tempDir("corpus-snippet-roots-");
  const dir = join(roots, "alice", "mail", "cur");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "1.alice:2,S"),
    `Message-ID: <ledger@example.com>\r\nFrom: keeper@example.com\r\nTo: alice@example.com\r\nDate: Tue, 12 Jun 2001 10:00:00 +0000\r\nSubject: Lighthouse ledger\r\n\r\n${body()}\r\n`,
  );
  t = await testApp({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") });
  token = (await t.services.auth.issuer.issue("alice", ["corpus:search", "connectors:read", "connectors:write"])).token;
  const r = await t.app.handle(
    postJson("/v1/connectors", { id: "mail", kind: "maildir", config: { path: join(roots, "alice", "mail") } }, bearer(token)),
  );
  expect(r.status).toBe(200);
  await connectorsSettled(t.services, "alice");
});

afterAll(async () => {
  await t?.services.close();
});

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

test("shape A and C snippets never end in half an emoji", async () => {
  expect(body().charCodeAt(596)).toBe(0xd83d);
  const a = await t.app.handle(postJson("/v1/query", { q: "lighthouse ledger keeper" }, bearer(token)));
  expect(a.status).toBe(200);
  const snippets = ((await a.json()) as { results: Array<{ snippet: string }> }).results.map((r) => r.snippet);
  expect(snippets.length).toBe(1);
  expect(snippets[0]!.length).toBeGreaterThan(500);
  // On the wire: '..."lighthouse li \\ud83d..."': valid JSON, but no valid text once decoded.
  for (const s of snippets) expect(loneSurrogate.test(s)).toBe(false);
  const c = await t.app.handle(postJson("/v1/query", { query: "lighthouse ledger keeper", conversation_id: null }, bearer(token)));
  expect(c.status).toBe(200);
  const sources = ((await c.json()) as { sources: Array<{ snippet: string }> }).sources;
  for (const s of sources) expect(loneSurrogate.test(s.snippet)).toBe(false);
});
