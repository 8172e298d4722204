import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { beginRequest, infoOf, requestContext } from "../../src/http/request-context";
import { req, testApp } from "../helpers";

describe("request id and client address", () => {
  test("each response carries a fresh X-Request-Id, successes and errors alike", async () => {
    const { app } = await testApp();
    const ids = [];
    for (const path of ["/missing", "/missing", "/", "/"]) ids.push((await app.handle(req(path))).headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{20}$/);
    expect(new Set(ids).size).toBe(4);
  });

  test("an incoming X-Request-Id is not trusted", async () => {
    const { app } = await testApp();
    const r = await app.handle(req("/missing", { headers: { "x-request-id": "forged <script>" } }));
    expect(r.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{20}$/);
  });

  test("the socket address recorded by the listener is the client address", () => {
    expect(beginRequest(req("/"), "10.1.2.3").client_ip).toBe("10.1.2.3");
    expect(beginRequest(req("/"), { requestIP: () => ({ address: "::1" }) }).client_ip).toBe("::1");
    // Asked with the Request the socket gave, when the app is given a wrapper of it.
    const received = req("/");
    const wrapped = new Request(received.url, { headers: received.headers });
    const asked: Request[] = [];
    const peer = {
      requestIP(r: Request) {
        asked.push(r);
        return { address: "192.0.2.9" };
      },
    };
    expect(beginRequest(wrapped, peer, received).client_ip).toBe("192.0.2.9");
    expect(asked).toEqual([received]);
  });

  // No symbol on the Request: the state is on Elysia's context, the listener's handed over once.
  test("every stage of a request sees one info, on the context; the listener's is the one the app takes", async () => {
    const seen: unknown[] = [];
    const app = new Elysia()
      .use(requestContext)
      .onRequest(({ info }) => {
        seen.push(info);
      })
      .onTransform(({ info }) => {
        seen.push(info);
      })
      .onError(({ request, info }) => {
        seen.push(infoOf(request, info));
        return { failed: true };
      })
      .get("/ok", ({ info }) => {
        seen.push(info);
        return { ok: true };
      })
      .get("/fail", () => {
        throw new Error("x");
      });
    const request = req("/ok");
    const began = beginRequest(request, "192.0.2.1");
    await app.handle(request);
    expect(seen).toEqual([began, began, began]);
    expect(Object.getOwnPropertySymbols(request)).toEqual([]);
    seen.length = 0;
    await app.handle(req("/fail"));
    expect(seen).toHaveLength(3);
    expect(new Set(seen).size).toBe(1);
    expect((seen[0] as { client_ip: string }).client_ip).toBe("unknown");
  });
});
