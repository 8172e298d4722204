// Reserved and unsafe subjects (D24): a token naming the operator's owner, the anonymous caller
// of CORPUS_AUTH_DISABLED, or anything that is not a safe identifier is 401 everywhere.
import { describe, expect, test } from "bun:test";
import { subjectProblem } from "../../src/auth/subjects";
import { TokenRequestError } from "../../src/auth/tokens";
import { bearer, postJson, testApp } from "../helpers";

const ALL = ["corpus:search", "corpus:read", "connectors:read", "connectors:write"] as never;

describe("token subjects (D24)", () => {
  test("the rule", () => {
    for (const ok of ["alice", "u-9f2c7d41", "alice@example.com", "a.b+c_d"]) expect(subjectProblem(ok)).toBeUndefined();
    for (const bad of ["*", "local", "", ".", "..", "../bob", "a/b", "-x", "a b", "x".repeat(129), "ümlaut"])
      expect(subjectProblem(bad)).toBeString();
  });

  test("tokens signed by the server itself for `*` or `local` are 401 on REST and /mcp; the server never issues them", async () => {
    const t = await testApp();
    for (const sub of ["*", "local", "a/b"]) {
      const { token } = await t.services.auth.issuer.sign(sub, ALL, 600);
      const rest = await t.app.handle(postJson("/v1/query", { query: "anything" }, bearer(token)));
      expect(rest.status).toBe(401);
      const del = await t.app.handle(new Request("http://localhost/v1/delete_my_data", { method: "DELETE", headers: bearer(token) }));
      expect(del.status).toBe(401);
      const mcp = await t.app.handle(postJson("/mcp", { jsonrpc: "2.0", id: "1", method: "tools/list" }, bearer(token)));
      expect(mcp.status).toBe(401);
      expect(t.services.auth.issuer.issue(sub, ALL)).rejects.toBeInstanceOf(TokenRequestError);
    }
    // The operator's index key is untouched by any of it.
    expect(t.services.userKeys.existingKeyFor("*")).toBeUndefined();
    await t.services.close();
  });
});
