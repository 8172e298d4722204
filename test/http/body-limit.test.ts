import { describe, expect, test } from "bun:test";
import { Elysia, t } from "elysia";
import { AMBIGUOUS_LENGTH_MESSAGE, bodyLimit, limitedStream } from "../../src/http/body-limit";
import { errorMapper } from "../../src/http/errors";
import { beginRequest, infoOf } from "../../src/http/request-context";
import { createLogger, memorySink } from "../../src/log";
import { postJson, req } from "../helpers";

const LIMIT = 1024;

function app() {
  return new Elysia()
    .use(errorMapper(createLogger("ERROR", memorySink().sink)))
    .use(bodyLimit(LIMIT))
    .post("/echo", ({ body }) => body, { body: t.Object({ text: t.String() }) })
    .post("/length", async ({ request }) => (await request.text()).length)
    .get("/", () => "ok");
}

/** A chunked body (no Content-Length) that counts how much of it was pulled. */
function streamingRequest(totalBytes: number, chunk = 256) {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= totalBytes) return controller.close();
      const n = Math.min(chunk, totalBytes - pulled);
      pulled += n;
      controller.enqueue(new TextEncoder().encode(pulled === n ? `{"text":"${"a".repeat(n - 10)}` : "a".repeat(n)));
    },
  });
  const request = req("/echo", { method: "POST", body: stream, headers: { "content-type": "application/json" } });
  return { request, pulled: () => pulled };
}

describe("body limit (D17)", () => {
  test("a declared Content-Length over the limit is 413 payload_too_large", async () => {
    const body = JSON.stringify({ text: "x".repeat(LIMIT) });
    const r = await app().handle(postJson("/echo", body, { "content-length": String(body.length) }));
    expect(r.status).toBe(413);
    expect(await r.json()).toEqual({ type: "payload_too_large", message: `request body exceeds the limit of ${LIMIT} bytes` });
  });

  test("at the limit passes", async () => {
    const body = JSON.stringify({ text: "x".repeat(LIMIT - 11) });
    expect(body.length).toBe(LIMIT);
    const r = await app().handle(postJson("/echo", body, { "content-length": String(body.length) }));
    expect(r.status).toBe(200);
    const chunked = await app().handle(postJson("/echo", body));
    expect(chunked.status).toBe(200);
  });

  test("a chunked body is cut off soon after the limit, not read whole", async () => {
    const { request, pulled } = streamingRequest(1_000_000);
    const r = await app().handle(request);
    expect(r.status).toBe(413);
    expect(pulled()).toBeLessThan(LIMIT + 1024);
  });

  test("a small chunked body is parsed as JSON", async () => {
    const { request } = streamingRequest(200);
    const small = await new Response(request.body).text();
    const r = await app().handle(
      req("/echo", { method: "POST", body: new Blob([`${small}"}`]).stream(), headers: { "content-type": "application/json" } }),
    );
    expect(r.status).toBe(200);
  });

  test("limitedStream passes the bytes below the limit and fails past it", async () => {
    const body = () => new Request("http://localhost/", { method: "POST", body: "hello" }).body!;
    expect(await new Response(limitedStream(body(), 10)).text()).toBe("hello");
    await expect(new Response(limitedStream(body(), 4)).text()).rejects.toMatchObject({ status: 413 });
  });

  test("the route sees a chunked body under the same request id and client address", async () => {
    const seen: string[] = [];
    const probe = new Elysia().use(bodyLimit(LIMIT)).post("/id", ({ request, body, info: scoped }) => {
      const info = infoOf(request, scoped);
      // The route sees the wrapped body, not the request the listener began.
      expect(request).not.toBe(started);
      seen.push(info.request_id, info.client_ip);
      return body;
    });
    const request = req("/id", { method: "POST", body: new Blob(['{"a":1}']).stream(), headers: { "content-type": "application/json" } });
    const started = request;
    const info = beginRequest(request, "192.0.2.7");
    const r = await probe.handle(request);
    expect(await r.json()).toEqual({ a: 1 });
    expect(seen).toEqual([info.request_id, "192.0.2.7"]);
  });

  test("a Content-Length that is not one plain number is 400 on any method, before anything is read (D31)", async () => {
    for (const [method, value] of [
      ["POST", "10, 10"],
      ["POST", "+10"],
      ["POST", "1e3"],
      ["POST", ""],
      ["GET", "5, 5"],
    ] as const) {
      const r = await app().handle(req(method === "GET" ? "/" : "/length", { method, headers: { "content-length": value } }));
      expect({ method, value, status: r.status }).toEqual({ method, value, status: 400 });
      expect(await r.json()).toEqual({ type: "bad_request", message: AMBIGUOUS_LENGTH_MESSAGE });
    }
  });
});
