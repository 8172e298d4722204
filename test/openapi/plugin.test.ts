import { describe, expect, test } from "bun:test";
import { req, testApp } from "../helpers";

describe("OpenAPI document and UI", () => {
  test("OpenAPI 3.0.3, description version 1.0.0, generated from the route schemas", async () => {
    const { app } = await testApp();
    const r = await app.handle(req("/openapi/json"));
    expect(r.status).toBe(200);
    const doc = (await r.json()) as any;
    expect(doc.openapi).toBe("3.0.3");
    expect(doc.info.version).toBe("1.0.0");
    for (const path of [
      "/",
      "/api/auth/health",
      "/api/connectors/health",
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-authorization-server",
    ]) {
      expect(doc.paths[path]?.get).toBeDefined();
    }
    const root = doc.paths["/"].get.responses["200"].content["application/json"].schema;
    expect(root.required).toEqual(["status", "service", "version"]);
    expect(doc.components.securitySchemes.bearer).toEqual({ type: "http", scheme: "bearer", bearerFormat: "JWT" });
    expect(JSON.stringify(doc.paths)).not.toContain("/openapi/assets");
    // Every request body is documented with the schema it is validated with.
    for (const path of ["/v1/query", "/v1/deep_search", "/v1/connectors", "/v1/webhooks"]) {
      const schema = doc.paths[path].post.requestBody.content["application/json"].schema;
      expect(schema.type).toBe("object");
      expect(schema.additionalProperties).toBe(false);
    }
    expect(doc.paths["/v1/query"].post.requestBody.content["application/json"].schema.properties.max_results).toMatchObject({
      minimum: 1,
      maximum: 100,
    });
    for (const path of ["/v1/delete_my_data", "/mcp"]) expect(doc.paths[path]).toBeDefined();
  });

  test("the UI page loads its script and style from this server, not a CDN", async () => {
    const { app } = await testApp();
    const page = await (await app.handle(req("/openapi"))).text();
    expect(page).toContain("/openapi/assets/swagger-ui-bundle.js");
    expect(page).toContain("/openapi/assets/swagger-ui.css");
    expect(page).not.toMatch(/https?:\/\/(?!localhost)[a-z0-9.-]+\/[^"']*\.(js|css)/);
    const js = await app.handle(req("/openapi/assets/swagger-ui-bundle.js"));
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toContain("javascript");
    expect((await js.text()).length).toBeGreaterThan(500_000);
    const css = await app.handle(req("/openapi/assets/swagger-ui.css"));
    expect(css.headers.get("content-type")).toContain("text/css");
  });
});
