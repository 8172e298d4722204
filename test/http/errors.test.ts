import { describe, expect, test } from "bun:test";
import { Elysia, t } from "elysia";
import postgres from "postgres";
import { DOMAIN_ERROR_KINDS, DomainError } from "../../src/errors";
import { ERROR_TYPES, errorMapper, HttpError, toErrorResponse } from "../../src/http/errors";
import { createLogger, memorySink } from "../../src/log";
import { bearer, postJson, req, testApp } from "../helpers";

function app() {
  const logs = memorySink();
  const a = new Elysia({ normalize: false })
    .use(errorMapper(createLogger("DEBUG", logs.sink)))
    .post("/items", ({ body }) => body, {
      body: t.Object(
        { name: t.String({ minLength: 1 }), count: t.Optional(t.Integer({ minimum: 1, maximum: 100 })) },
        { additionalProperties: false },
      ),
    })
    .get("/conflict", () => {
      throw new HttpError(409, "Idempotency-Key reused with another body", { "x-extra": "1" });
    })
    .get("/crash", () => {
      throw new Error("database password is hunter2 at /srv/secret.ts:12");
    });
  return { app: a, logs };
}

describe("error mapper (D15, first document part 7)", () => {
  test("validation failure is 400 bad_request naming the field and the rule, never 422", async () => {
    const { app: a } = app();
    const missing = await a.handle(postJson("/items", {}));
    expect(missing.status).toBe(400);
    const body = (await missing.json()) as { type: string; message: string };
    expect(body).toEqual({ type: "bad_request", message: expect.stringContaining("name") });
    expect(Object.keys(body).sort()).toEqual(["message", "type"]);

    const bound = await a.handle(postJson("/items", { name: "x", count: 500 }));
    expect(bound.status).toBe(400);
    const b = (await bound.json()) as { message: string };
    expect(b.message).toContain("count");
    expect(b.message).toContain("100");

    const extra = await a.handle(postJson("/items", { name: "x", color: "red" }));
    expect(extra.status).toBe(400);
  });

  test("a body that is not JSON is 400", async () => {
    const { app: a } = app();
    const r = await a.handle(postJson("/items", "{not json"));
    expect(r.status).toBe(400);
    expect(((await r.json()) as { type: string }).type).toBe("bad_request");
  });

  test("unknown route is 404 not_found", async () => {
    const { app: a } = app();
    const r = await a.handle(req("/nothing/here"));
    expect(r.status).toBe(404);
    expect(await r.json()).toEqual({ type: "not_found", message: "no such route or resource" });
  });

  test("an HttpError keeps its status, message and headers", async () => {
    const { app: a } = app();
    const r = await a.handle(req("/conflict"));
    expect(r.status).toBe(409);
    expect(r.headers.get("x-extra")).toBe("1");
    expect(await r.json()).toEqual({ type: "conflict", message: "Idempotency-Key reused with another body" });
  });

  test("an unexpected error is 500 server_error with nothing internal in body or log", async () => {
    const { app: a, logs } = app();
    const r = await a.handle(req("/crash"));
    expect(r.status).toBe(500);
    const text = await r.text();
    expect(JSON.parse(text)).toEqual({ type: "server_error", message: "internal error; retry with backoff" });
    for (const leak of ["hunter2", "secret.ts", "at "]) expect(text).not.toContain(leak);
    const logged = JSON.stringify(logs.records());
    expect(logged).toContain("unhandled error");
    expect(logged).not.toContain("hunter2");
  });
});

test("a PostgreSQL error's code and message are logged, not its detail, and nothing of it is answered (D33)", () => {
  const logs = memorySink();
  // As postgres.js makes it from the server's ErrorResponse: the detail quotes the rows' values.
  const PgError = postgres.PostgresError as unknown as new (fields: Record<string, string>) => Error;
  const error = new PgError({
    message: "deadlock detected",
    code: "40P01",
    routine: "DeadLockReport",
    detail: "Process 1 waits for ShareLock on transaction 2; key (user_id, doc_id)=(hunter2, d1)",
  });
  const mapped = toErrorResponse("UNKNOWN", error, createLogger("DEBUG", logs.sink), { request_id: "req_1" });
  expect(mapped.status).toBe(500);
  expect(JSON.stringify(mapped.body)).not.toMatch(/deadlock|40P01|hunter2/);
  const [record] = logs.records();
  expect(record).toMatchObject({ message: "unhandled error", error: "PostgresError", pg_code: "40P01", pg_message: "deadlock detected" });
  expect(JSON.stringify(logs.records())).not.toContain("hunter2");
});

describe("a room's errors, by meaning, get their status in one place (src/errors.ts, DOMAIN_ERROR_STATUS)", () => {
  test("each kind is answered with its status and { type, message }; its headers are kept", () => {
    const log = createLogger("CRITICAL");
    const expected = { invalid: 400, unauthorized: 401, forbidden: 403, not_found: 404, conflict: 409, unavailable: 503 } as const;
    for (const kind of DOMAIN_ERROR_KINDS) {
      const mapped = toErrorResponse("UNKNOWN", new DomainError(kind, `a ${kind} thing`, { "x-why": kind }), log, {});
      expect(mapped).toEqual({
        status: expected[kind],
        headers: { "x-why": kind },
        body: { type: ERROR_TYPES[expected[kind]], message: `a ${kind} thing` },
      });
    }
  });

  test("through the app: an unknown connector is 404 naming the user's ids, a refused token 401 with its challenge", async () => {
    const { app, services } = await testApp();
    const token = (await services.auth.issuer.issue("alice", ["connectors:read", "connectors:write"] as never)).token;
    const missing = await app.handle(req("/v1/connectors/nope", { method: "DELETE", headers: bearer(token) }));
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ type: "not_found", message: "no connector with id nope; yours are: none" });
    const refused = await app.handle(req("/v1/connectors", { headers: { authorization: "Bearer nonsense" } }));
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toStartWith("Bearer ");
    expect(((await refused.json()) as { type: string }).type).toBe("unauthorized");
  });
});
