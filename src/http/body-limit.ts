// Body size limit (D17): a declared Content-Length over the limit is refused before any byte
// of the body is read; a body without one (chunked) is read as a stream and refused as soon
// as it passes the limit, so no request body is ever held whole beyond it.
import { Elysia } from "elysia";
import { HttpError, NOT_JSON } from "./errors";

export function tooLarge(limit: number): HttpError {
  return new HttpError(413, `request body exceeds the limit of ${limit} bytes`);
}

export async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    parts.push(value);
  }
  return Buffer.concat(parts);
}

export const bodyLimit = (limit: number) =>
  new Elysia({ name: "corpus/body-limit", seed: limit })
    .onRequest(({ request }) => {
      // Reading headers has a cost; bodiless methods skip it.
      const m = request.method;
      if (m === "GET" || m === "HEAD" || m === "OPTIONS") return;
      const declared = request.headers.get("content-length");
      if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
    })
    .onParse({ as: "global" }, async ({ request, contentType }) => {
      if (request.headers.get("content-length") !== null) return; // bounded above; default parsers
      const bytes = await readLimited(request, limit);
      const text = new TextDecoder().decode(bytes);
      const type = contentType.split(";")[0]!.trim().toLowerCase();
      if (type === "application/json" || type.endsWith("+json")) {
        if (text.trim() === "") return {};
        try {
          return JSON.parse(text);
        } catch {
          throw new HttpError(400, NOT_JSON);
        }
      }
      if (type === "application/x-www-form-urlencoded") return Object.fromEntries(new URLSearchParams(text));
      return text;
    });
