// CORS only for the origins in CORPUS_CORS_ALLOW_ORIGINS_CSV; with none configured, no
// Access-Control-* header is ever sent and no origin is reflected.
import { cors as elysiaCors } from "@elysiajs/cors";
import { Elysia } from "elysia";

// The specification's GET, POST, OPTIONS, and DELETE: the REST control plane removes
// connectors and webhooks with it, and the connector widget calls it from the assistant.
export const CORS_METHODS = ["GET", "POST", "PATCH", "DELETE", "OPTIONS"];
export const CORS_HEADERS = ["Content-Type", "Authorization"];

export function cors(origins: string[]) {
  if (origins.length === 0) return new Elysia({ name: "corpus/cors-off" });
  return elysiaCors({
    origin: origins,
    methods: CORS_METHODS,
    allowedHeaders: CORS_HEADERS,
    credentials: false,
    preflight: true,
  });
}
