// The tools of /mcp (second document part 2), one record each (./tool-record.ts). Adding a
// tool is adding its record here: tools/list, tools/call, /debug/tools and the scope check
// all read this table.
import type { AnyTool } from "./tool-record";
import { corpusAnswer } from "./tools/corpus-answer";
import { corpusSearch } from "./tools/corpus-search";
import { fetchDocument } from "./tools/fetch";
import { openConnectors } from "./tools/open-connectors";
import { search } from "./tools/search";

export const TOOLS: readonly AnyTool[] = [corpusSearch, openConnectors, search, fetchDocument, corpusAnswer];

const BY_NAME = new Map(TOOLS.map((t) => [t.definition.name, t]));

/** The record of the tool named `name`, if there is one. */
export const toolNamed = (name: string): AnyTool | undefined => BY_NAME.get(name);
