// Body size limit (D17): a declared Content-Length over the limit is refused before any byte
// of the body is read; a body without one (chunked) is given to the route behind a counting
// stream that fails as soon as it passes the limit, so no request body is ever held whole
// beyond it. One request hook only, and nothing at all for bodiless methods: a parse hook
// would make every route's handler asynchronous.
import { Elysia } from "elysia";
import { HttpError } from "./errors";
import { infoOf, isBodiless, requestContext } from "./request-context";

export function tooLarge(limit: number): HttpError {
  return new HttpError(413, `request body exceeds the limit of ${limit} bytes`);
}

/** `body`, failing with 413 once more than `limit` bytes have passed. */
export function limitedStream(body: ReadableStream<Uint8Array>, limit: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let size = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        return controller.error(tooLarge(limit));
      }
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** The request with its chunked body limited (its info stays on the context: same id and client address). */
function withLimitedBody(request: Request, limit: number): Request {
  const limited = new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: limitedStream(request.body!, limit),
    signal: request.signal,
    // @ts-expect-error: Bun and the fetch standard need it for a streamed body
    duplex: "half",
  });
  return limited;
}

export const bodyLimit = (limit: number) =>
  new Elysia({ name: "corpus/body-limit", seed: limit }).use(requestContext).onRequest((context) => {
    const request = context.request;
    if (isBodiless(request.method)) return;
    const declared = request.headers.get("content-length");
    if (declared !== null) {
      if (Number(declared) > limit) throw tooLarge(limit);
      return; // Bun holds the request to its declared length
    }
    if (!request.body) return;
    // Before the context's Request is replaced: the info is the listener's, kept for the first.
    context.info = infoOf(request, context.info);
    context.request = withLimitedBody(request, limit);
  });
