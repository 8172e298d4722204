// Debug routes (second document part 4): present only when CORPUS_DEBUG_MODE=true; with it
// off they are not registered at all, so they answer 404 like any unknown route.
import { Elysia, t } from "elysia";
import { toolDefinitionsJson } from "../mcp/tool-definitions";

export const debugRoutes = (enabled: boolean) => {
  const app = new Elysia({ name: "corpus/debug" });
  if (!enabled) return app;
  const detail = (summary: string) => ({ tags: ["debug"], summary });
  return app
    .get("/debug/tools", () => ({ tools: toolDefinitionsJson() }), {
      response: t.Object({ tools: t.Array(t.Record(t.String(), t.Unknown())) }),
      detail: detail("Tool definitions, as tools/list returns them"),
    })
    .get("/debug/ping", () => ({ pong: "ok" as const, timestamp: new Date().toISOString() }), {
      response: t.Object({ pong: t.Literal("ok"), timestamp: t.String({ format: "date-time" }) }),
      detail: detail("Connectivity check"),
    });
};
