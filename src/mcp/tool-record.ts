// What one MCP tool is (issue 15 item 3): a record of its definition (name, title,
// description, input and output schemas, annotations), the scope it needs and what it runs.
// The schemas are TypeBox: the same objects are listed by tools/list and /debug/tools, and
// validate the arguments (and the structured result) through the SDK's Standard Schema seam,
// so a tool is declared once. Adding a tool is adding a record to TOOLS (./tools.ts).

import type { CallToolResult, StandardSchemaWithJSON, ToolAnnotations } from "@modelcontextprotocol/server";
import type { Static, TObject, TSchema } from "@sinclair/typebox";
import { Value, type ValueError, ValueErrorType } from "@sinclair/typebox/value";
import type { Archive } from "../archive/store";
import type { Scope } from "../auth/scopes";
import type { AuthService } from "../auth/service";
import type { Principal } from "../auth/verifier";
import type { ConnectorRegistry } from "../connectors/registry";
import type { UserKeys } from "../crypto/user-keys";
import type { RateLimits } from "../limits/rate-limit";
import type { QuestionStageTimes } from "../questions/stages";
import type { QueryService } from "../retrieval/search";

/** The second document's application messages (part 7): one source for every answer. */
export const MESSAGES = {
  emptyQuery: "Query cannot be empty",
  queryTooLong: "Query length exceeds maximum",
  toolNotFound: "Tool not found",
  unauthorized: "Unauthorized",
  rateLimited: "Rate limit exceeded",
  internal: "Internal error",
  insufficientStorage: "Insufficient storage",
} as const;

export interface ToolServices {
  query: QueryService;
  archive: Archive;
  connectors: ConnectorRegistry;
  auth: AuthService;
  limiter: RateLimits;
  /** Users' data keys: a caller's made present on this node before a tool runs (D33). */
  userKeys: Pick<UserKeys, "ready">;
  /** How long each stage of a question took (the operator's metrics, D35). */
  questionStages?: QuestionStageTimes;
}

export interface Caller {
  user: string;
  scopes: ReadonlySet<string>;
  /** The verified token, when the caller has one (not with CORPUS_AUTH_DISABLED). */
  principal?: Principal;
}

/** What a tool runs with besides its arguments. */
export interface ToolContext {
  services: ToolServices;
  caller: Caller;
  /** The REST API's origin, for what a tool hands to a page (the connector panel). */
  apiBase: string;
  /** The public URL (CORPUS_OAUTH_RESOURCE_URL, D4): where a citation's page /d/<id> opens (D36). */
  publicUrl: string;
  /** The MCP revision the client speaks (its MCP-Protocol-Version header), when it says. */
  protocolVersion?: string;
  /** The request's id, for log lines. */
  requestId?: string;
  /** The request was answered 503 by the request timeout meanwhile (D17): nothing it does now reaches the caller. */
  timedOut?: () => boolean;
  /** Says a rate limit refused the call (a tool error, not a 429): the metrics count it (D35). */
  rateLimited?: () => void;
}

/** What to say when an argument breaks the schema: per JSON pointer, one text or one per keyword. */
export type ArgumentMessages = Record<string, string | Partial<Record<"minLength" | "maxLength" | "other", string>>>;

export interface ToolDefinition<I extends TObject, O extends TObject | undefined> {
  name: string;
  title: string;
  description: string;
  inputSchema: I;
  outputSchema?: O;
  annotations: ToolAnnotations;
  _meta?: Record<string, unknown>;
}

export interface ToolRecord<I extends TObject = TObject, O extends TObject | undefined = TObject | undefined> {
  definition: ToolDefinition<I, O>;
  scope: Scope;
  /** Applied to the arguments before they are checked (e.g. trimming), when the tool's rules say so. */
  normalize?: (args: Record<string, unknown>) => Record<string, unknown>;
  /** Messages in the spec's words for arguments the schema refuses. */
  messages?: ArgumentMessages;
  /** Runs with arguments that passed `definition.inputSchema`. */
  run(args: Static<I>, ctx: ToolContext): Promise<CallToolResult>;
}

/** A record of any tool, as the table holds it. */
export type AnyTool = ToolRecord<TObject, TObject | undefined>;

/** A tool's record, typed by its own schemas where it is written and kept in the table as AnyTool. */
export function defineTool<I extends TObject, O extends TObject | undefined>(record: ToolRecord<I, O>): AnyTool {
  // The SDK calls run only with arguments its validation (standardSchema of inputSchema) passed.
  return { ...record, run: (args, ctx) => record.run(args as Static<I>, ctx) } as AnyTool;
}

/** Revisions that know `resource_link` content (from 2025-06-18 on; older clients and the seed's 1.0 get none). */
export const supportsResourceLinks = (version: string | undefined): boolean =>
  version !== undefined && /^\d{4}-/.test(version) && version >= "2025-06-18";

/** Whether the caller's token allows the tool (D5). */
export const mayUse = (caller: Caller, tool: AnyTool): boolean => caller.scopes.has(tool.scope);

/** A tool failure the model reads: an error label, then the reason (second document part 2). */
export const toolError = (label: string, reason: string): CallToolResult => ({
  content: [{ type: "text", text: `${label}: ${reason}` }],
  isError: true,
});

/** Plain JSON of a TypeBox schema, as clients receive it. */
export const jsonSchemaOf = (schema: TSchema): Record<string, unknown> => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;

function messageFor(error: ValueError, messages: ArgumentMessages): string {
  if (error.type === ValueErrorType.ObjectAdditionalProperties) return `unknown argument ${error.path.slice(1)}`;
  const own = messages[error.path];
  if (typeof own === "string") return own;
  const keyword =
    error.type === ValueErrorType.StringMinLength ? "minLength" : error.type === ValueErrorType.StringMaxLength ? "maxLength" : "other";
  return own?.[keyword] ?? own?.other ?? `${error.path.slice(1) || "arguments"}: ${error.message}`;
}

/**
 * A TypeBox schema as a Standard Schema with JSON Schema, the seam the SDK validates tool
 * arguments and results through. The SDK answers a refusal with an `isError` result whose text
 * is the label "Input validation error" and these messages.
 */
export function standardSchema<T extends TSchema>(
  schema: T,
  opts: { normalize?: AnyTool["normalize"]; messages?: ArgumentMessages } = {},
): StandardSchemaWithJSON<Static<T>> {
  const json = jsonSchemaOf(schema);
  return {
    "~standard": {
      version: 1,
      vendor: "typebox",
      validate(input: unknown) {
        const value =
          opts.normalize && input !== null && typeof input === "object" && !Array.isArray(input)
            ? opts.normalize(input as Record<string, unknown>)
            : input;
        const first = Value.Errors(schema, value).First();
        if (!first) return { value: value as Static<T> };
        return { issues: [{ message: messageFor(first, opts.messages ?? {}) }] };
      },
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

/** The definition as tools/list shows it (and /debug/tools). */
export function listedDefinition(record: AnyTool): Record<string, unknown> {
  const d = record.definition;
  return {
    name: d.name,
    title: d.title,
    description: d.description,
    inputSchema: jsonSchemaOf(d.inputSchema),
    annotations: d.annotations,
    ...(d._meta ? { _meta: d._meta } : {}),
    ...(d.outputSchema ? { outputSchema: jsonSchemaOf(d.outputSchema) } : {}),
  };
}
