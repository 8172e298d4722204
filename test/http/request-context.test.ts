import { describe, expect, test } from "bun:test";
import { beginRequest, requestInfo } from "../../src/http/request-context";
import { req, testApp } from "../helpers";

describe("request id and client address", () => {
  test("each error response carries a fresh X-Request-Id; a success does not", async () => {
    const { app } = await testApp();
    const a = (await app.handle(req("/missing"))).headers.get("x-request-id");
    const b = (await app.handle(req("/missing"))).headers.get("x-request-id");
    expect((await app.handle(req("/"))).headers.get("x-request-id")).toBeNull();
    expect(a).toMatch(/^req_[0-9a-f]{20}$/);
    expect(a).not.toBe(b);
  });

  test("an incoming X-Request-Id is not trusted", async () => {
    const { app } = await testApp();
    const r = await app.handle(req("/missing", { headers: { "x-request-id": "forged <script>" } }));
    expect(r.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{20}$/);
  });

  test("the socket address recorded by the server is the client address", () => {
    const r = req("/");
    beginRequest(r, "10.1.2.3");
    expect(requestInfo(r)).toBe(requestInfo(r));
    expect(requestInfo(r).client_ip).toBe("10.1.2.3");
    const viaServer = req("/");
    beginRequest(viaServer, { requestIP: () => ({ address: "::1" }) });
    expect(requestInfo(viaServer).client_ip).toBe("::1");
    expect(requestInfo(req("/")).client_ip).toBe("unknown");
  });
});
