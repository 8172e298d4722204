// One table of scopes (D5, D36): each MCP tool's record takes its scope from TOOL_SCOPE, opening
// a document needs the same scope on every wire, and README's table of scopes says what the
// tables say (each route and tool in the row of the scope it needs, and in no other row).
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MCP_OPEN_DOCUMENT_SCOPE, REQUIRED_SCOPE, SCOPES, TOOL_SCOPE } from "../../src/auth/scopes";
import { PANEL_SCOPE } from "../../src/mcp/panel-resource";
import { TOOLS } from "../../src/mcp/tools";
import { fetchDocument } from "../../src/mcp/tools/fetch";

const README = readFileSync(join(import.meta.dir, "../../README.md"), "utf8");

/** README's table of scopes: each scope's row, what it grants. */
function readmeRows(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const m of README.matchAll(/^\| `([a-z]+:[a-z]+)` \| (.*) \|$/gm)) rows.set(m[1]!, m[2]!);
  return rows;
}

describe("scopes per route and tool", () => {
  test("every tool's record has the scope of TOOL_SCOPE, and every tool is in it", () => {
    expect(TOOLS.map((t) => [t.definition.name, t.scope])).toEqual(
      TOOLS.map((t) => [t.definition.name, TOOL_SCOPE[t.definition.name as keyof typeof TOOL_SCOPE]]),
    );
    expect(Object.keys(TOOL_SCOPE).sort()).toEqual(TOOLS.map((t) => t.definition.name).sort());
    expect(PANEL_SCOPE).toBe(TOOL_SCOPE.open_connectors);
  });

  test("opening a document: the search tools' scope on MCP, corpus:read through REST", () => {
    expect(MCP_OPEN_DOCUMENT_SCOPE).toBe("corpus:search");
    expect(fetchDocument.scope).toBe(MCP_OPEN_DOCUMENT_SCOPE);
    expect(TOOL_SCOPE.search).toBe(MCP_OPEN_DOCUMENT_SCOPE);
    expect(TOOL_SCOPE.corpus_search).toBe(MCP_OPEN_DOCUMENT_SCOPE);
    expect(REQUIRED_SCOPE["GET /v1/documents/:id"]).toBe("corpus:read");
  });

  test("README's table: each route and tool in its scope's row only", () => {
    const rows = readmeRows();
    expect([...rows.keys()].sort()).toEqual([...SCOPES].sort());
    const mentions = (row: string, thing: string) => row.includes(thing);
    for (const [tool, scope] of Object.entries(TOOL_SCOPE)) {
      const named = `\`${tool}\``;
      expect({ tool, row: mentions(rows.get(scope)!, named) }).toEqual({ tool, row: true });
      for (const [other, row] of rows)
        if (other !== scope) expect({ tool, other, row: mentions(row, named) }).toEqual({ tool, other, row: false });
    }
    for (const [route, scope] of Object.entries(REQUIRED_SCOPE)) {
      const path = route.split(" ")[1]!.replace(":id", "{id}");
      expect({ route, row: mentions(rows.get(scope)!, path) }).toEqual({ route, row: true });
    }
    expect(mentions(rows.get(REQUIRED_SCOPE["GET /v1/documents/:id"])!, "/d/<id>")).toBe(true);
  });
});
