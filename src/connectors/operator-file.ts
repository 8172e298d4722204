// The operator's connectors (CORPUS_CONNECTORS_FILE, D18): a JSON array read once at start,
// every entry checked as a user's add would be; a bad file stops the start with the entry at fault.
import { readFileSync } from "node:fs";
import { OPERATOR_OWNER } from "../auth/subjects";
import { ConfigError } from "../config";
import { type Definition, validateConfig } from "./definition";
import { CONNECTOR_KINDS, isConnectorKind } from "./kinds";
import { CONNECTOR_ID_PATTERN } from "./model";

/** The operator file refused, and why (the entry at fault first). */
export const operatorFileError = (path: string, why: string) =>
  new ConfigError(`CORPUS_CONNECTORS_FILE=${JSON.stringify(path)} is not allowed: ${why}`);

export function loadOperatorFile(path: string): Definition[] {
  const refused = (why: string) => operatorFileError(path, why);
  let list: unknown;
  try {
    list = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    throw refused("expected a readable JSON file");
  }
  if (!Array.isArray(list)) throw refused("expected a JSON array of connectors");
  const seen = new Set<string>();
  const idPattern = new RegExp(CONNECTOR_ID_PATTERN);
  return list.map((item: unknown, i): Definition => {
    const c = (item && typeof item === "object" ? item : {}) as Record<string, unknown>;
    const fail = (why: string) => refused(`connector ${i + 1}: ${why}`);
    if (typeof c.id !== "string" || !idPattern.test(c.id)) throw fail(`id must match ${CONNECTOR_ID_PATTERN}`);
    if (seen.has(c.id)) throw fail(`id ${c.id} is listed twice`);
    seen.add(c.id);
    if (!isConnectorKind(c.kind)) throw fail(`kind must be one of ${CONNECTOR_KINDS.join(", ")}`);
    let config: Record<string, unknown>;
    try {
      config = validateConfig(c.kind, c.config, "config");
    } catch (error) {
      throw fail((error as Error).message);
    }
    return { owner: OPERATOR_OWNER, id: c.id, kind: c.kind, label: typeof c.label === "string" ? c.label : c.id, config };
  });
}
