import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { ERROR_TYPES } from "./errors";

/** D15: every REST error body. */
export const ErrorBody = t.Object({
  type: t.String({ enum: Object.values(ERROR_TYPES), description: "Error code (first document part 7)" }),
  message: t.String(),
});

/** D15/D16: the 429 body of the REST interface (rateLimitedError). */
export const RateLimitedBody = t.Object({
  error: t.Object({ type: t.Literal("rate_limited"), message: t.String(), retry_after_seconds: Type.Integer() }),
});

/** The 429 body of a per-address bucket (/mcp; ip-limit.ts). */
export const IpRateLimitedBody = t.Object({ error: t.String(), retry_after: Type.Integer() });

/** An error on /mcp (mcp/errors.ts): a JSON-RPC 2.0 error object. */
export const JsonRpcErrorBody = t.Object({
  jsonrpc: t.Literal("2.0"),
  id: t.Union([t.String(), Type.Number(), t.Null()]),
  error: t.Object({
    code: Type.Integer({ description: "-32700 parse error, -32600 invalid request, -32603 internal error, ..." }),
    message: t.String(),
    data: t.Optional(t.Unknown()),
  }),
});
