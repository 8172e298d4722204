// The tool definitions as clients receive them from tools/list, for /debug/tools (second
// document part 4): the same records, so the two listings cannot differ.
import { listedDefinition } from "./tool-record";
import { TOOLS } from "./tools";

export function toolDefinitionsJson(): Array<Record<string, unknown>> {
  return TOOLS.map(listedDefinition);
}
