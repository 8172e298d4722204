// What the OpenAPI document says of /mcp beyond its routes' summaries: the JSON-RPC body, the
// headers of the transport, and the statuses of its own (the shared ones, 401/403/413/415/429/
// 500, are added with every route's: openapi/complete.ts). Plain JSON, merged into the document.
import { JsonRpcErrorBody } from "../http/model";
import { MAX_BATCH } from "./protocol";

const JSON_RPC_ERROR = { "application/json": { schema: JsonRpcErrorBody } };
const JSON_RPC_MESSAGE = { type: "object", description: "a JSON-RPC 2.0 request, notification or response", additionalProperties: true };
const SESSION_HEADER = { name: "Mcp-Session-Id", in: "header", schema: { type: "string" } };

/** By OpenAPI path, then method. */
export const MCP_OPERATIONS: Record<string, Record<string, Record<string, unknown>>> = {
  "/mcp": {
    post: {
      parameters: [
        {
          name: "MCP-Protocol-Version",
          in: "header",
          required: false,
          schema: { type: "string" },
          description: "the negotiated revision (2025 revisions), or 2026-07-28",
        },
        { ...SESSION_HEADER, required: false, description: "a 2025 session from initialize" },
      ],
      requestBody: {
        required: true,
        content: {
          "application/json": {
            schema: {
              oneOf: [
                JSON_RPC_MESSAGE,
                {
                  type: "array",
                  items: JSON_RPC_MESSAGE,
                  minItems: 1,
                  maxItems: MAX_BATCH,
                  description: "a batch (revisions before 2025-06-18)",
                },
              ],
            },
          },
        },
      },
      responses: {
        200: {
          description: "the JSON-RPC answer, or the answers of a batch",
          headers: { "Mcp-Session-Id": { description: "a new 2025 session, after initialize", schema: { type: "string" } } },
          content: { "application/json": { schema: { oneOf: [JSON_RPC_MESSAGE, { type: "array", items: JSON_RPC_MESSAGE }] } } },
        },
        202: { description: "accepted: the body held only notifications or responses" },
        404: { description: "not_found: the Mcp-Session-Id is unknown or another user's", content: JSON_RPC_ERROR },
        406: { description: "not acceptable: the client must accept application/json", content: JSON_RPC_ERROR },
      },
    },
    get: {
      responses: {
        405: {
          description: "method_not_allowed",
          headers: { Allow: { description: "POST, DELETE", schema: { type: "string" } } },
          content: JSON_RPC_ERROR,
        },
      },
    },
    delete: {
      parameters: [{ ...SESSION_HEADER, required: true }],
      responses: {
        204: { description: "the session ended" },
        404: { description: "not_found: no such session of this user", content: JSON_RPC_ERROR },
      },
    },
  },
};
