// Request bodies are JSON (first document: "Every POST carries Content-Type: application/json";
// issue 13 item 14). A body of any other declared type is 415 before a byte of it is read, on
// REST and on /mcp alike: a form or text/plain POST, which a foreign page may send without a
// CORS preflight, never reaches a handler.
import { Elysia } from "elysia";
import { CALLBACK_PATH as GRANT_CALLBACK_PATH } from "../connectors/oauth/providers";
import { CONSOLE_FORM_PATHS } from "../console/routes";
import { FORM_PATHS } from "../oauth/routes";
import { HttpError } from "./errors";

export const UNSUPPORTED_MEDIA_TYPE = "Content-Type: must be application/json";

const JSON_MEDIA_TYPE = /^\s*application\/json\s*(;|$)/i;
const WITH_BODY = new Set(["POST", "PUT", "PATCH"]);

/** Whether a Content-Type header value is application/json (parameters such as charset allowed). */
export const isJsonContentType = (value: string | null) => value !== null && JSON_MEDIA_TYPE.test(value);

export const jsonOnly = new Elysia({ name: "corpus/content-type" }).onRequest(({ request }) => {
  if (!WITH_BODY.has(request.method) || isJsonContentType(request.headers.get("content-type"))) return;
  // The authorization server's token, revocation and page forms are form posts (RFC 6749), and the
  // console's (D35), and the confirmation of a connector's OAuth grant; they check their own type and CSRF.
  const path = new URL(request.url).pathname;
  if (FORM_PATHS.has(path) || CONSOLE_FORM_PATHS.has(path) || path === GRANT_CALLBACK_PATH) return;
  throw new HttpError(415, UNSUPPORTED_MEDIA_TYPE);
});
