// A connector as the registry knows it (its owner, id, kind, label and config), and what every
// path into it checks: a config against its kind's schema, a change merged over the stored one,
// the config as shown.
import { Value } from "@sinclair/typebox/value";
import { DomainError } from "../errors";
import { type ConnectorKind, KINDS } from "./kinds";
import { remoteTarget } from "./remote";

export interface Definition {
  /** The user id, or the operator's owner for CORPUS_CONNECTORS_FILE's connectors. */
  owner: string;
  id: string;
  kind: ConnectorKind;
  label: string;
  config: Record<string, unknown>;
  created_at?: string;
}

/** `config` checked against its kind's schema (defaults applied): 400 naming the field at fault. */
export function validateConfig(kind: ConnectorKind, config: unknown, where: string): Record<string, unknown> {
  const { schema } = KINDS[kind];
  const withDefaults = Value.Default(schema, structuredClone(config));
  const error = Value.Errors(schema, withDefaults).First();
  if (error || !Value.Check(schema, withDefaults)) {
    const field = error?.path ? `${where}${error.path.replaceAll("/", ".")}` : where;
    const message = error?.message ?? "does not fit the schema";
    throw new DomainError("invalid", `${field}: ${message.charAt(0).toLowerCase()}${message.slice(1)}`);
  }
  KINDS[kind].check(withDefaults);
  remoteTarget(() => KINDS[kind].remoteHost(withDefaults));
  return withDefaults;
}

/** A change (PATCH) merged over the stored config, its kept secrets restored, and checked as on add. */
export function changedConfig(stored: Definition, change: Record<string, unknown>): Record<string, unknown> {
  const kept = KINDS[stored.kind].keepSecrets({ ...change }, stored.config);
  return validateConfig(stored.kind, { ...stored.config, ...kept }, "config");
}

/** The config as shown: no password, no credentials in URLs. */
export function publicConfig(kind: ConnectorKind, config: Record<string, unknown>): Record<string, unknown> {
  return KINDS[kind].redact(config);
}
