// The fields of each request shape (first document part 4, D7): a body is in one shape, and a
// field of another shape in it is refused with a 400 naming it, never silently ignored (a
// client that sends `top_k` with `query` would otherwise get 10 results and not know why).
import { HttpError } from "../http/errors";

export type Shape = "A" | "B" | "C";

/** D7: `q` is shape A, `conversation_id` shape C, anything else shape B. */
export const queryShapeOf = (body: object): Shape =>
  "q" in body && (body as { q?: unknown }).q !== undefined ? "A" : "conversation_id" in body ? "C" : "B";

/** /v1/query's fields per shape (part 4's request table). */
export const QUERY_FIELDS: Record<Shape, readonly string[]> = {
  A: ["q", "top_k", "filters"],
  B: ["query", "connectors", "max_results"],
  C: ["query", "connectors", "conversation_id"],
};

/** /v1/deep_search's: shape A by `q`; B and C (`query`) share one answer, so their fields go together. */
export const DEEP_SEARCH_FIELDS: Record<"A" | "B", readonly string[]> = {
  A: ["q", "top_k", "time_range", "filters"],
  B: ["query", "max_results", "date_from", "date_to", "top_k"],
};

const NAMES: Record<string, string> = {
  A: "shape A (a body with q)",
  B: "shape B (a body with query)",
  C: "shape C (a body with conversation_id)",
};

/** 400 for the first field of `body` that `shape` does not have. */
export function refuseForeignFields(body: object, shape: string, fields: readonly string[]): void {
  const foreign = Object.keys(body).find((k) => !fields.includes(k) && (body as Record<string, unknown>)[k] !== undefined);
  if (foreign) throw new HttpError(400, `${foreign}: not a field of ${NAMES[shape] ?? shape}, which takes ${fields.join(", ")}`);
}
