import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { runChecks } from "../../src/health/checks";
import { healthRoutes } from "../../src/health/routes";
import { req, testApp } from "../helpers";

describe("health routes (second document parts 2, 4)", () => {
  test("GET / is ok with service and version", async () => {
    const { app } = await testApp();
    const r = await app.handle(req("/"));
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/json");
    expect(await r.json()).toEqual({ status: "ok", service: "corpus", version: "0.1.0" });
  });

  test("auth and connectors health are healthy while the database answers", async () => {
    const { app } = await testApp();
    expect(await (await app.handle(req("/api/auth/health"))).json()).toEqual({ status: "healthy", service: "auth" });
    expect(await (await app.handle(req("/api/connectors/health"))).json()).toEqual({
      status: "healthy",
      service: "connectors",
      pending: { archive_vectors: 0, connector_chunks: 0, webhook_deliveries: 0, deletion_steps: 0 },
    });
  });

  test("the connectors' health counts the work owed (D29): counts only, no token needed", async () => {
    const { app, services } = await testApp();
    services.db.transaction(() => {
      services.webhooks.enqueue("user.deleted", { user_id: "u-1" }, [
        { url: "https://hooks.example/a", secret: "s" },
        { url: "https://hooks.example/b", secret: "s" },
      ]);
      services.scrub.owe();
    })();
    const body = await (await app.handle(req("/api/connectors/health"))).json();
    expect(body.pending).toEqual({ archive_vectors: 0, connector_chunks: 0, webhook_deliveries: 2, deletion_steps: 1 });
    expect(JSON.stringify(body)).not.toContain("u-1");
  });

  test("503 when the database is really unavailable", async () => {
    const { app, db } = await testApp();
    db.close();
    for (const service of ["auth", "connectors"]) {
      const r = await app.handle(req(`/api/${service}/health`));
      expect(r.status).toBe(503);
      expect(await r.json()).toEqual({ status: "unhealthy", service, reason: "database unavailable" });
    }
  });

  test("a check that throws counts as unhealthy, with its reason", async () => {
    expect(await runChecks([() => ({ healthy: true }), () => Promise.reject(new Error("keys missing"))])).toEqual({
      healthy: false,
      reason: "keys missing",
    });
    const app = new Elysia().use(healthRoutes({ auth: [() => ({ healthy: false, reason: "no signing key" })], connectors: [] }));
    const r = await app.handle(req("/api/auth/health"));
    expect(r.status).toBe(503);
    expect(((await r.json()) as { reason: string }).reason).toBe("no signing key");
    expect((await app.handle(req("/api/connectors/health"))).status).toBe(200);
  });
});
