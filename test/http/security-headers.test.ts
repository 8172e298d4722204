import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { SECURITY_HEADERS, securityHeaders } from "../../src/http/security-headers";
import { postJson, req, testApp } from "../helpers";

const expectHeaders = (r: Response) => {
  expect(r.headers.get("x-content-type-options")).toBe("nosniff");
  expect(r.headers.get("x-frame-options")).toBe("DENY");
  expect(r.headers.get("x-xss-protection")).toBe("1; mode=block");
  expect(r.headers.get("strict-transport-security")).toBe("max-age=31536000; includeSubDomains");
};

describe("security headers (second document part 4)", () => {
  test("the four headers and values of the specification", () => {
    expect(Object.keys(SECURITY_HEADERS)).toHaveLength(4);
  });

  test("on a plain route, a raw Response and a thrown error", async () => {
    const app = new Elysia()
      .use(securityHeaders)
      .get("/ok", () => ({ ok: true }))
      .get("/raw", () => new Response("raw"))
      .get("/boom", () => {
        throw new Error("x");
      });
    for (const path of ["/ok", "/raw", "/boom"]) expectHeaders(await app.handle(req(path)));
  });

  test("on every response of the app: success, 404, 400, 413, docs, UI assets", async () => {
    const { app } = await testApp({ CORPUS_MAX_REQUEST_SIZE: "1024" });
    const responses = [
      await app.handle(req("/")),
      await app.handle(req("/no/such/route")),
      await app.handle(req("/api/auth/health")),
      await app.handle(req("/openapi/json")),
      await app.handle(postJson("/", "x".repeat(5000), { "content-length": "5000" })),
      await app.handle(req("/openapi")),
      await app.handle(req("/openapi/assets/swagger-ui.css")),
    ];
    for (const r of responses) expectHeaders(r);
  });
});
