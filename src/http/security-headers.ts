// The response headers of the second document (part 4), on every response, errors included.
// Elysia's default headers are copied into each request's context when it starts, which
// costs far less than a hook per request.
import { Elysia } from "elysia";

export const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "x-xss-protection": "1; mode=block",
  "strict-transport-security": "max-age=31536000; includeSubDomains",
} as const;

export const securityHeaders = new Elysia({ name: "corpus/security-headers" }).headers(SECURITY_HEADERS);
