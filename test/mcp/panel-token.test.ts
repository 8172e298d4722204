// The connector panel's token (issue 13 item 8, D25): never longer-lived than the caller's own,
// so a panel token cannot renew itself forever; none for a token about to expire.
import { decodeJwt } from "jose";
import { expect, test } from "bun:test";
import { bearer, postJson, testApp } from "../helpers";

const call = (token: string) => postJson("/mcp", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "open_connectors", arguments: {} } }, { ...bearer(token), accept: "application/json" });

async function panelToken(r: Response): Promise<string | undefined> {
  const body = (await r.json()) as { result: { isError?: boolean; content: Array<{ type: string; resource?: { text: string } }> } };
  const html = body.result.content.find((c) => c.type === "resource")?.resource?.text;
  return html?.match(/eyJ[\w-]+\.[\w-]+\.[\w-]+/)?.[0];
}

test("a panel token expires with its parent, and a parent near its end gets none", async () => {
  const t = await testApp();
  const parent = await t.services.auth.issuer.issue("alice", ["connectors:read", "connectors:write"], 120);
  const child = await panelToken(await t.app.handle(call(parent.token)));
  expect(child).toBeDefined();
  expect(decodeJwt(child!).exp).toBeLessThanOrEqual(parent.expiresAt);
  // The child asking for a grandchild gets no more time either.
  const grandchild = await panelToken(await t.app.handle(call(child!)));
  expect(decodeJwt(grandchild!).exp).toBeLessThanOrEqual(parent.expiresAt);
  await t.services.close();

  let clock = Date.now();
  const late = await testApp({}, () => clock);
  const soon = await late.services.auth.issuer.sign("alice", ["connectors:read"], 120);
  clock += 90_000;
  const r = (await (await late.app.handle(call(soon.token))).json()) as { result: { isError?: boolean; content: Array<{ text?: string }> } };
  expect(r.result.isError).toBe(true);
  expect(r.result.content[0]!.text).toContain("sign in again");
  await late.services.close();
});
