// Every id corpus makes, and the rule of the ids a user chooses: defined once here.
import { randomBytes } from "node:crypto";

/** The prefixes of the ids corpus makes (the first document names those of its answers). */
export const ID_PREFIX = {
  query: "qry_",
  deepSearch: "ds_",
  conversation: "conv_",
  /** A result of shape A. */
  result: "chk_",
  /** A chunk of shape B and C, and a citation of the MCP tools (documents/ids.ts: keyed, stable). */
  chunk: "chnk_",
  /** A document (a record as it was ranked; documents/ids.ts: keyed, stable). */
  document: "doc_",
  webhook: "wh_",
  event: "evt_",
  request: "req_",
} as const;

/** A random id: the prefix and 20 letters and digits (120 bits; `-` and `_` spelled `x`, so an id is one word). */
export const newId = (prefix: string) => `${prefix}${randomBytes(15).toString("base64url").replace(/[-_]/g, "x")}`;

/**
 * Request ids: unique without a random draw per request, a random part per process and a
 * counter (`req_` and 20 hex digits).
 */
export function requestIdGenerator(): () => string {
  const base = `${ID_PREFIX.request}${randomBytes(6).toString("hex")}`;
  let counter = 0;
  return () => `${base}${(counter++).toString(16).padStart(8, "0")}`;
}

/** Connector ids are chosen when a connector is added (D10). */
export const CONNECTOR_ID_PATTERN = "^[a-z0-9][a-z0-9_-]{0,62}$";
