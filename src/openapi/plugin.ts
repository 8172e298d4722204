// The OpenAPI 3.0.3 document (`/openapi/json`) and its UI (`/openapi`), generated from the
// TypeBox schemas the routes validate with. The UI's script and style are served from the
// executable itself, so the page works on an air-gapped server.

import { readFileSync } from "node:fs";
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import { assets } from "../native/assets";
import { API_DESCRIPTION_VERSION } from "../version";
import { completeDocument } from "./complete";

const ASSET_PREFIX = "/openapi/assets";
const SPEC_PATH = "/openapi/json";

export const openapiDocs = () => {
  // Read once, lazily: the bundle is 1.5 MB and most processes never serve it.
  const cache = new Map<string, string>();
  const asset = (path: string, type: string) => () => {
    let body = cache.get(path);
    if (body === undefined) cache.set(path, (body = readFileSync(path, "utf8")));
    return new Response(body, { headers: { "content-type": type, "cache-control": "public, max-age=86400" } });
  };
  return (
    new Elysia({ name: "corpus/openapi" })
      // The page names its document relatively ("openapi/json"): from /openapi/ that would miss.
      .onBeforeHandle(({ request, redirect }) => (new URL(request.url).pathname === "/openapi/" ? redirect("/openapi", 308) : undefined))
      // Local to this instance: the document's own route. Completed on a copy: the generated
      // document shares objects with the schemas the routes validate with.
      .onAfterHandle(({ path, response }) =>
        path === SPEC_PATH && response && typeof response === "object" && !(response instanceof Response)
          ? completeDocument(JSON.parse(JSON.stringify(response)))
          : undefined,
      )
      .use(
        openapi({
          path: "/openapi",
          specPath: SPEC_PATH,
          provider: "swagger-ui",
          openapiVersion: "3.0.3",
          swagger: { cdn: `${ASSET_PREFIX}/swagger-ui-bundle.js`, theme: `${ASSET_PREFIX}/swagger-ui.css`, autoDarkMode: false },
          exclude: { staticFile: false, paths: [`${ASSET_PREFIX}/swagger-ui-bundle.js`, `${ASSET_PREFIX}/swagger-ui.css`] },
          documentation: {
            info: {
              title: "corpus",
              version: API_DESCRIPTION_VERSION,
              description: "Self-hosted retrieval over a user's connected business tools: ranked, cited results; an encrypted archive.",
            },
            components: { securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } } },
          },
        }),
      )
      .get(`${ASSET_PREFIX}/swagger-ui-bundle.js`, asset(assets.swaggerUiBundle, "text/javascript; charset=utf-8"), {
        detail: { hide: true },
      })
      .get(`${ASSET_PREFIX}/swagger-ui.css`, asset(assets.swaggerUiStyle, "text/css; charset=utf-8"), { detail: { hide: true } })
  );
};
