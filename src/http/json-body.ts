// JSON request bodies (D17; issue 13 item 2): the text is parsed only when its nesting stays
// within a bound, so a hostile "[[[[…" or {"a":{"a":…}} is a clear 400, never a stack overflow
// in parsing or validation, nor minutes of work. No request of this service nests deeper. On
// guarded routes it is parsed only once the caller is known (issue 13 finding 4).
import { HttpError, NOT_JSON } from "./errors";
import { JsonText } from "./json-text";

export const MAX_JSON_DEPTH = 32;
export const TOO_DEEP_MESSAGE = `body: JSON nested deeper than ${MAX_JSON_DEPTH} levels`;

/** Whether arrays and objects in `text` nest deeper than `max` (strings are skipped). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

export const PROTO_KEY_MESSAGE = "body: the key __proto__ is not allowed";

/** A `__proto__` key: an own property after JSON.parse, but any later copy by assignment turns it into a prototype, past the schema's unknown-field check. */
const refuseProtoKey = (key: string, value: unknown) => {
  if (key === "__proto__") throw new HttpError(400, PROTO_KEY_MESSAGE);
  return value;
};

/** The JSON value of `text`; 400 when it is not JSON, nests too deep or has a `__proto__` key. */
export function parseJsonText(text: string): unknown {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) throw new HttpError(400, TOO_DEEP_MESSAGE);
  try {
    // The reviver costs a call per value: only when the text could hold such a key.
    // Or a key spelled with escapes ("\u005f_proto__" is the same key once parsed).
    return text.includes("__proto__") || text.includes("\\u") ? JSON.parse(text, refuseProtoKey) : JSON.parse(text);
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw new HttpError(400, NOT_JSON);
  }
}

export const NOT_OBJECT_MESSAGE = "body: expected a JSON object";

/** The JSON object of `text` (every REST body is one): as parseJsonText, and 400 for an array, a string, a number or null. */
export function parseJsonObject(text: string): object {
  const value = parseJsonText(text);
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new HttpError(400, NOT_OBJECT_MESSAGE);
  return value;
}

/**
 * Elysia parser of the guarded routes that take JSON: the text only, as a JsonText. The guard
 * (auth/guard.ts) parses it with parseJsonText after authentication and scope: the parse stage
 * runs before any hook a route's guard could add, and an unauthenticated 2 MB object of 200,000
 * keys cost half a second of the one thread here.
 */
export async function jsonBody({ request }: { request: Request }): Promise<JsonText> {
  return new JsonText(await request.text());
}

/**
 * A guarded route's `parse`: jsonBody always answers (its text, or the body limit's 413);
 * "json" after it is never reached and only tells the OpenAPI document the body's content type.
 */
export const JSON_PARSE = [jsonBody, "json"] as const;
