// What a connector kind is (issue 15 item 2): one record that says everything corpus needs to
// know of a kind, so that adding a kind is a folder with its connector and its record, plus one
// line in the kinds table (kinds.ts). The registry, the API's schema and the panel's form read
// the record; none of them names a kind.
import type { Static, TObject } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { Pin } from "../net/pin";
import type { IndexedOptions } from "./indexed-source";
import type { LocalIndex } from "./local-index";
import type { AccessTokens } from "./oauth/grants";
import type { Confine } from "./paths";
import type { Connector } from "./types";

/** What a kind's `create` is given: the owner's policies and, for sources corpus indexes, an index. */
export interface KindContext {
  /** A new local index for the connector (only kinds with `indexedLocally` ask for one). */
  index(): LocalIndex;
  /** The embeddings, log, clock and storage guard of an indexed connector. */
  indexed: IndexedOptions;
  /** Resolves and checks a host before each connection (D26). */
  pin: Pin;
  /** Checks a local path again before each scan, read or open (D23). */
  check: Confine;
  /** The access tokens of the connector's OAuth grant (kinds that sign in with one, issue 38); a user's connectors only. */
  oauth?: AccessTokens;
}

/** One field of the panel's form; `name` is the config field it fills. */
export interface FormField {
  name: string;
  label: string;
  input: "text" | "number" | "checkbox" | "password" | "json";
  placeholder?: string;
  /** Shown in an empty form. */
  initial?: string | number | boolean;
}

/** A kind as its folder declares it, typed by its config schema. */
export interface KindDeclaration<S extends TObject> {
  /** The name of the kind in the panel's list. */
  title: string;
  /** The config users send and the operator file lists (validated, defaults applied; the OpenAPI document shows it). */
  schema: S;
  create(config: Static<S>, context: KindContext): Connector;
  /** The config as shown to its owner: without passwords, credentials or secrets. */
  redact?(config: Static<S>): Record<string, unknown>;
  /** The config field that holds a local path, if any: it must lie under the user's roots (D23). */
  localPath?(config: Static<S>): string | undefined;
  /** The host the connector reaches and the field that names it, if any (D26). Throws on a malformed one. */
  remoteHost?(config: Static<S>): { host: string; field: string } | undefined;
  /** Rules between fields the schema cannot say (a password or an OAuth provider): throws a DomainError naming the field. */
  check?(config: Static<S>): void;
  /**
   * A change merged over the stored config (PATCH, D5): secrets left out, or sent back as shown,
   * are kept, but only where they went before. Throws a DomainError when a change needs the secret again.
   */
  keepSecrets?(change: Record<string, unknown>, stored: Static<S>): Record<string, unknown>;
  /** corpus reads the source into its own index (scanned at start, embedded ahead of time, D29). */
  indexedLocally: boolean;
  /** Its records' dates are file times, not what a question's date means: planned dates do not narrow it. */
  datesAreFileTimes: boolean;
  /** The panel's form fields for this kind, in order. */
  form: FormField[];
}

/** A kind as the registry uses it: every function takes a stored config, checked against the schema first. */
export interface ConnectorKindRecord {
  title: string;
  schema: TObject;
  indexedLocally: boolean;
  datesAreFileTimes: boolean;
  form: FormField[];
  create(config: Record<string, unknown>, context: KindContext): Connector;
  redact(config: Record<string, unknown>): Record<string, unknown>;
  localPath(config: Record<string, unknown>): string | undefined;
  remoteHost(config: Record<string, unknown>): { host: string; field: string } | undefined;
  check(config: Record<string, unknown>): void;
  keepSecrets(change: Record<string, unknown>, stored: Record<string, unknown>): Record<string, unknown>;
}

/** A stored config that no longer fits its kind's schema (written by an older version, or by hand). */
export class ConfigMismatch extends Error {}

/** The record of a kind: its declaration, with each function guarded by the schema (no casts). */
export function defineKind<S extends TObject>(kind: KindDeclaration<S>): ConnectorKindRecord {
  const typed = (config: Record<string, unknown>): Static<S> => {
    if (Value.Check(kind.schema, config)) return config;
    throw new ConfigMismatch(`the stored config does not fit the ${kind.title} schema`);
  };
  return {
    title: kind.title,
    schema: kind.schema,
    indexedLocally: kind.indexedLocally,
    datesAreFileTimes: kind.datesAreFileTimes,
    form: kind.form,
    create: (config, context) => kind.create(typed(config), context),
    redact: (config) => (kind.redact ? kind.redact(typed(config)) : config),
    localPath: (config) => kind.localPath?.(typed(config)),
    remoteHost: (config) => kind.remoteHost?.(typed(config)),
    check: (config) => kind.check?.(typed(config)),
    keepSecrets: (change, stored) => (kind.keepSecrets ? kind.keepSecrets(change, typed(stored)) : change),
  };
}
