// Request timeout (D17): a request still unanswered after CORPUS_REQUEST_TIMEOUT seconds is
// ended with 503 and a clear body. It wraps the app's fetch, so it covers every stage.
import { errorBody } from "./errors";
import { requestInfo } from "./request-context";
import { SECURITY_HEADERS } from "./security-headers";

export type FetchHandler = (request: Request) => Response | Promise<Response>;

export function withTimeout(handle: FetchHandler, seconds: number, onTimeout?: (request: Request) => void): FetchHandler {
  const ms = seconds * 1000;
  return (request) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<Response>((resolve) => {
      timer = setTimeout(() => {
        onTimeout?.(request);
        resolve(
          Response.json(errorBody(503, `request timed out after ${seconds} s`), {
            status: 503,
            headers: { ...SECURITY_HEADERS, "x-request-id": requestInfo(request).request_id, "retry-after": "1" },
          }),
        );
      }, ms);
    });
    return Promise.race([Promise.resolve(handle(request)), timedOut]).finally(() => clearTimeout(timer));
  };
}
