// A request still in flight when the server closes (server.ts stop(): the listener, then the
// services): what it asks of the connectors must not start a connector again on the closed
// database, whose first sync would then fail behind everyone's back.
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir, testApp } from "../helpers";
import { operatorFile } from "../support/sources";

test("after close, asking for a user's connectors starts none and says the service is closing", async () => {
  const folder = join(tempDir("corpus-closed-"), "mail");
  mkdirSync(join(folder, "cur"), { recursive: true });
  writeFileSync(join(folder, "cur", "1.x:2,S"), "Message-ID: <1@example.com>\r\nSubject: Pier\r\n\r\nThe pier is closed.\r\n");
  const t = await testApp({ CORPUS_CONNECTORS_FILE: operatorFile([{ id: "mail", kind: "maildir", config: { path: folder } }]) });
  const registry = t.services.connectors;
  await t.services.close();
  await expect(registry.active("alice")).rejects.toThrow("the service is closing");
  expect([...(registry as unknown as { live: Map<string, unknown> }).live.keys()]).toEqual([]);
});
