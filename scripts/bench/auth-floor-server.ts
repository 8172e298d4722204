// The runtime's floor for scripts/bench/auth.ts: a bare Bun.serve with the same body and
// security headers, once open and once doing only what D4/D16 make every protected response
// do (read the Authorization header, write the six X-RateLimit-* headers) with no checking
// at all. No implementation on this runtime can keep more of the open route than this does.
import { JSON_CONTENT_TYPE, SECURITY_HEADERS } from "../../src/http/response";

const BASE = new Headers({ ...SECURITY_HEADERS, "content-type": JSON_CONTENT_TYPE });
const WINDOW = new Headers(BASE);
WINDOW.set("x-ratelimit-limit-minute", "1000000");
WINDOW.set("x-ratelimit-reset-minute", String(Math.ceil(Date.now() / 60_000) * 60));
WINDOW.set("x-ratelimit-limit-day", "100000000");
WINDOW.set("x-ratelimit-reset-day", String(Math.ceil(Date.now() / 86_400_000) * 86_400));
const body = () => JSON.stringify({ connectors: [{ id: "mail", kind: "maildir", status: "ok" }] });
let count = 0;

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(request) {
    if (request.url.endsWith("/bench/open")) return new Response(body(), { headers: BASE });
    if (request.headers.get("authorization") === null) return new Response(null, { status: 401 });
    const response = new Response(body(), { headers: WINDOW });
    count++;
    response.headers.set("x-ratelimit-remaining-minute", String(1_000_000 - (count % 1_000_000)));
    response.headers.set("x-ratelimit-remaining-day", String(100_000_000 - count));
    return response;
  },
});
console.log(JSON.stringify({ url: server.url.href.replace(/\/$/, "") }));
