/** Service version (second document part 9), reported by `GET /`, `corpus version` and MCP serverInfo. */
export const SERVICE_VERSION = "0.1.0";
export const SERVICE_NAME = "corpus";
/** Version of the OpenAPI description (first document part 9). */
export const API_DESCRIPTION_VERSION = "1.0.0";
