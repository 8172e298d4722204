#!/usr/bin/env bun
// The `corpus` command (D1, D2, D30, D35): serve (default), token, user, backup, verify, restore, connector, check,
// version, licenses, help; all take --data-dir, each its own --help. COMMANDS describes them once: the
// parser (node:util's parseArgs underneath) and both helps are read from it.
import { type ParseArgsConfig, parseArgs as parseArgv } from "node:util";
import { SCOPES } from "./auth/scopes";
import { DEFAULT_TTL_SECONDS, MAX_TTL_SECONDS, MIN_TTL_SECONDS } from "./auth/ttl";
import { type Config, ConfigError, type ConfigVariable, describeConfig, effectiveLogLevel, loadConfig } from "./config";
import { createLogger } from "./log";
import { refuseUntilShared } from "./store/shared";
import { SERVICE_VERSION } from "./version";

/** An option a command takes: its value's name in the usage text (none for a flag) and whether it must be given. */
interface OptionSpec {
  value?: string;
  required?: boolean;
}

interface CommandSpec {
  /** The command's options besides --data-dir, in the order the usage shows them. */
  options: Record<string, OptionSpec>;
  /** What the usage shows after the command when it is not the options themselves. */
  synopsis?: string;
  /** What it does: one line per entry. */
  summary: string[];
}

const VALUE = (value: string, required = true): OptionSpec => ({ value, required });

/** Every command, its options and its help: the one place the CLI is described. */
const COMMANDS: Record<string, CommandSpec> = {
  serve: { options: {}, summary: ["start the server (the default)"] },
  "token create": {
    options: { user: VALUE("ID"), scopes: VALUE("s1,s2"), ttl: VALUE("SECONDS", false) },
    summary: [
      `print a signed access token for that user (ttl in seconds: ${MIN_TTL_SECONDS} to ${MAX_TTL_SECONDS}, default ${DEFAULT_TTL_SECONDS})`,
      `scopes: ${SCOPES.join(", ")}`,
    ],
  },
  "token revoke": {
    options: { jti: VALUE("ID", false), user: VALUE("ID", false) },
    synopsis: "--jti ID | --user ID",
    summary: ["revoke one token this server issued (--jti ID),", "or every token of that user issued until now (--user ID)"],
  },
  "user add": {
    options: { user: VALUE("ID"), operator: {} },
    summary: [
      "add a person who may sign in to the built-in authorization server;",
      "the password is read from standard input (one line, 10+ characters);",
      "--operator: with the operator's role (D35)",
    ],
  },
  "user passwd": { options: { user: VALUE("ID") }, summary: ["change a password (standard input); signs out their apps and sessions"] },
  "user remove": { options: { user: VALUE("ID") }, summary: ["remove a person and revoke their tokens"] },
  "user list": { options: {}, summary: ["list the people who may sign in"] },
  backup: {
    options: { out: VALUE("FILE"), force: {} },
    summary: [
      "write a consistent backup of the database while the server runs:",
      "one file, mode 0600, with a manifest; never the master key (--force replaces FILE)",
    ],
  },
  verify: {
    options: { from: VALUE("FILE") },
    summary: ["check a backup without restoring it: its manifest, every file's sha256, its schema"],
  },
  restore: {
    options: { from: VALUE("FILE") },
    summary: [
      "restore a backup into --data-dir, which must be empty or absent;",
      "the master key (CORPUS_MASTER_KEY or its file) must be the one",
      "the backup's data was sealed with",
    ],
  },
  "connector grant": {
    options: { id: VALUE("ID") },
    summary: [
      "grant an IMAP connector of CORPUS_CONNECTORS_FILE access to its mailbox with OAuth:",
      "prints the provider's authorization URL, then reads the address the browser",
      "is sent back to (or its code) from standard input",
    ],
  },
  check: { options: {}, summary: ["check this machine: data dir, database, sqlite-vec, embedding model"] },
  version: { options: {}, summary: ["print the version"] },
  licenses: {
    options: { json: {} },
    summary: ["print the licences and notices of everything the executable bundles", "(--json: the list, without the texts)"],
  },
  help: { options: {}, synopsis: "[command]", summary: ["print this help, or a command's (also --help, -h)"] },
};

/** Commands of two words ("token create"): the first word groups them. */
const GROUPS = new Set(Object.keys(COMMANDS).flatMap((c) => (c.includes(" ") ? [c.split(" ")[0]!] : [])));

const DATA_DIR_HELP = "  --data-dir DIR        data folder (overrides CORPUS_DATA_DIR; default ./corpus-data)";

function synopsis(command: string): string {
  const spec = COMMANDS[command]!;
  if (spec.synopsis !== undefined) return spec.synopsis;
  return Object.entries(spec.options)
    .map(([name, o]) => {
      const text = o.value ? `--${name} ${o.value}` : `--${name}`;
      return o.required ? text : `[${text}]`;
    })
    .join(" ");
}

/** One command in the list: name and synopsis, then what it does (on the next line when the first is long). */
function describe(command: string): string {
  const head = `${command} ${synopsis(command)}`.trim();
  const [first, ...rest] = COMMANDS[command]!.summary;
  const lines = head.length <= 21 ? [`  ${head.padEnd(21)} ${first}`] : [`  ${head}`, `${" ".repeat(24)}${first}`];
  return [...lines, ...rest.map((line) => `${" ".repeat(24)}${line}`)].join("\n");
}

export const USAGE = `corpus ${SERVICE_VERSION}: self-hosted retrieval over your business tools

Usage: corpus [command] [options]

Commands:
${Object.keys(COMMANDS).map(describe).join("\n")}

Options (every command):
${DATA_DIR_HELP}

Configuration (environment):
${describeConfig()
  .map((v) => `  ${v.name.padEnd(38)} ${v.description}${v.default !== undefined && v.default !== "" ? ` [${v.default}]` : ""}`)
  .join("\n")}
`;

/** `corpus <command> --help`: the command (or, for "token" or "user", each of the group) and its options. */
export function commandHelp(topic: string): string {
  const commands = COMMANDS[topic] ? [topic] : Object.keys(COMMANDS).filter((c) => c.startsWith(`${topic} `));
  const one = (c: string) =>
    [`Usage: corpus ${c} ${synopsis(c)}`.trimEnd(), "", ...COMMANDS[c]!.summary.map((line) => `  ${line}`)].join("\n");
  return `${commands.map(one).join("\n\n")}

Options:
${DATA_DIR_HELP}
  --help, -h            print this help

Configuration (environment): see corpus --help
`;
}

export class UsageError extends Error {
  /** The command whose --help the message points to, when it is known. */
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

export interface ParsedArgs {
  command: string;
  options: Record<string, string>;
  /** With command "help": the command or group whose help was asked for. */
  topic?: string;
}

/** Every option any command takes, for node:util's parser: it splits --name=value, --name value, -h and "--". */
const ALL_OPTIONS = {
  "data-dir": { type: "string" },
  help: { type: "boolean", short: "h" },
  ...Object.fromEntries(
    Object.values(COMMANDS).flatMap((spec) =>
      Object.entries(spec.options).map(([name, o]) => [name, { type: o.value ? "string" : "boolean" }] as const),
    ),
  ),
} satisfies ParseArgsConfig["options"];

/**
 * The command and its options. node:util's parser reads the words (not strictly: its own
 * messages name no command); what is refused, and how it is said, is decided here: an option
 * no command knows, one this command does not take, a value missing or given twice, a missing
 * required option, an extra word.
 */
export function parseArgs(argv: string[]): ParsedArgs {
  const { tokens } = parseArgv({ args: argv, options: ALL_OPTIONS, strict: false, allowPositionals: true, tokens: true });
  const positional: string[] = [];
  const given: Array<{ name: string; value?: string; inline: boolean }> = [];
  let help = false;
  /** An option no command takes: named with the command once it is known, so the message points to its --help. */
  let unknown: string | undefined;
  for (const token of tokens) {
    if (token.kind === "positional") positional.push(token.value);
    if (token.kind !== "option") continue;
    if (token.name === "help") help = true;
    else if (!Object.hasOwn(ALL_OPTIONS, token.name)) unknown ??= token.rawName;
    else given.push({ name: token.name, value: token.value, inline: token.inlineValue === true });
  }
  const twoWords = GROUPS.has(positional[0] ?? "");
  const command = twoWords ? `${positional[0]} ${positional[1] ?? ""}`.trim() : (positional[0] ?? "serve");
  if (command === "help") {
    const topic = positional.slice(1).join(" ") || undefined;
    if (topic && !COMMANDS[topic] && !GROUPS.has(topic)) throw new UsageError(`unknown command ${topic}`);
    return { command: "help", options: {}, topic };
  }
  if (help) {
    const known = positional.length > 0 && (COMMANDS[command] !== undefined || GROUPS.has(command));
    return { command: "help", options: {}, topic: known ? command : undefined };
  }
  const spec = COMMANDS[command];
  // Its value may have been taken for a command ("--port 1"): the option is what is wrong.
  if (unknown)
    throw spec ? new UsageError(`unknown option ${unknown} for ${command}`, command) : new UsageError(`unknown option ${unknown}`);
  if (!spec)
    throw new UsageError(
      twoWords ? `unknown command ${command}; ${positional[0]} takes ${groupWords(positional[0]!)}` : `unknown command ${command}`,
    );
  const options: Record<string, string> = {};
  for (const { name, value, inline } of given) {
    const option = name === "data-dir" ? VALUE("DIR") : spec.options[name];
    if (!option) throw new UsageError(`unknown option --${name} for ${command}`, command);
    if (options[name] !== undefined) throw new UsageError(`--${name} is given twice`, command);
    if (!option.value) {
      if (inline) throw new UsageError(`--${name} takes no value`, command);
      options[name] = "true";
      continue;
    }
    // "--user --scopes x" is a missing value, not a user named "--scopes" ("--user=-x" passes a dash).
    if (value === undefined || value === "" || (!inline && value.startsWith("-"))) throw new UsageError(`--${name} needs a value`, command);
    options[name] = value;
  }
  const used = twoWords ? 2 : 1;
  if (positional.length > used) throw new UsageError(`unexpected argument ${positional[used]}`, command);
  for (const [name, option] of Object.entries(spec.options)) {
    if (option.required && options[name] === undefined) throw new UsageError(`${command} needs --${name} ${option.value}`, command);
  }
  return { command, options };
}

const groupWords = (group: string) =>
  Object.keys(COMMANDS)
    .filter((c) => c.startsWith(`${group} `))
    .map((c) => c.slice(group.length + 1))
    .join(", ");

/**
 * The configuration, all of it or (`only`) the variables a command reads: the others are not
 * validated. Every command that opens the data is refused while CORPUS_DATABASE_URL names a store
 * not yet holding every room (D33): a token, a user or a backup never goes silently to SQLite.
 */
function configFor(args: ParsedArgs, only?: readonly ConfigVariable[]): Config {
  const given = args.options["data-dir"] ? { CORPUS_DATA_DIR: args.options["data-dir"] } : {};
  refuseUntilShared(loadConfig(process.env, given, ["CORPUS_DATABASE_URL"]));
  return loadConfig(process.env, given, only);
}

/** Why `corpus backup` or `restore` is refused while CORPUS_DATABASE_URL is set. */
export const EMBEDDED_BACKUP_ONLY = (command: string) =>
  `corpus ${command} copies the embedded data folder, but CORPUS_DATABASE_URL is set: every room is in PostgreSQL. Back it up with pg_dump, and keep the master key (CORPUS_MASTER_KEY_FILE) apart from it`;

export async function main(argv: string[]): Promise<number> {
  // Everything the service writes (database, WAL, keys) is readable by its owner only.
  process.umask(0o077);
  let args: ParsedArgs;
  try {
    args = parseArgs(argv);
  } catch (error) {
    const command = error instanceof UsageError ? error.command : undefined;
    console.error(`corpus: ${(error as Error).message}; see corpus ${command ? `${command} ` : ""}--help`);
    return 2;
  }
  try {
    switch (args.command) {
      case "help":
        process.stdout.write(args.topic ? commandHelp(args.topic) : USAGE);
        return 0;
      case "version":
        console.log(SERVICE_VERSION);
        return 0;
      case "licenses": {
        const { licensesOutput } = await import("./licenses/notices");
        console.log(await licensesOutput(args.options.json === "true"));
        return 0;
      }
      case "token create":
      case "token revoke": {
        const { tokenCommand, TOKEN_CONFIG } = await import("./auth/cli");
        console.log(await tokenCommand(args.command, args.options, configFor(args, TOKEN_CONFIG)));
        return 0;
      }
      case "user add":
      case "user passwd":
      case "user remove":
      case "user list": {
        const { userCommand } = await import("./accounts/cli");
        console.log(await userCommand(args.command, args.options, configFor(args)));
        return 0;
      }
      case "backup":
      case "verify":
      case "restore": {
        const { backupCommand } = await import("./backup/command");
        const config = configFor(args);
        // A backup holds the data folder's SQLite: with the rooms in PostgreSQL it would be a silent part (D33).
        if (config.CORPUS_DATABASE_URL && args.command !== "verify") throw new ConfigError(EMBEDDED_BACKUP_ONLY(args.command));
        console.log(JSON.stringify(await backupCommand(args.command, args.options, config), null, 2));
        return 0;
      }
      case "connector grant": {
        const { connectorGrantCommand } = await import("./connectors/oauth/cli");
        console.log(await connectorGrantCommand(args.options, configFor(args)));
        return 0;
      }
      case "check": {
        const { runCheck } = await import("./check");
        console.log(JSON.stringify(await runCheck(configFor(args)), null, 2));
        return 0;
      }
      case "serve": {
        const config = configFor(args);
        const log = createLogger(effectiveLogLevel(config));
        const { startServer } = await import("./server");
        const running = await startServer(config, log);
        const stop = async (signal: string) => {
          log.info("stopping", { signal });
          await running.stop();
          process.exit(0);
        };
        process.on("SIGINT", () => void stop("SIGINT"));
        process.on("SIGTERM", () => void stop("SIGTERM"));
        // A renewed certificate is taken up without a restart (only when serving HTTPS: otherwise
        // SIGHUP keeps its usual meaning and ends the process).
        if (config.CORPUS_TLS_CERT_FILE) process.on("SIGHUP", () => void running.reloadTls());
        return -1; // keep running
      }
      default:
        console.error(`corpus: unknown command ${args.command}; see corpus --help`);
        return 2;
    }
  } catch (error) {
    // A refused value is the user's to fix: one line, exit 2. (Loaded here: jose is not needed to start.)
    const { TokenRequestError } = await import("./auth/tokens");
    const { BackupError } = await import("./backup/errors");
    const { AccountError } = await import("./accounts/store");
    if (error instanceof BackupError) {
      console.error(`corpus: ${error.message}`);
      return 1;
    }
    if (
      error instanceof ConfigError ||
      error instanceof TokenRequestError ||
      error instanceof UsageError ||
      error instanceof AccountError
    ) {
      console.error(`corpus: ${error.message}`);
      return 2;
    }
    console.error(`corpus: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

if (import.meta.main) {
  // No top-level await: the executable is compiled to bytecode, which needs none.
  void main(process.argv.slice(2)).then((code) => {
    if (code >= 0) process.exit(code);
  });
}
