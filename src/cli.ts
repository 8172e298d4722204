#!/usr/bin/env bun
// The `corpus` command (D1, D2, D30): serve (default), token, backup, restore, check, version,
// --help; all take --data-dir.
import { SCOPES } from "./auth/scopes";
import { type Config, ConfigError, describeConfig, effectiveLogLevel, loadConfig } from "./config";
import { createLogger } from "./log";
import { SERVICE_VERSION } from "./version";

export const USAGE = `corpus ${SERVICE_VERSION}: self-hosted retrieval over your business tools

Usage: corpus [command] [options]

Commands:
  serve                 start the server (the default)
  token create --user ID --scopes s1,s2 [--ttl SECONDS]
                        print a signed access token for that user (default ttl 3600)
                        scopes: ${SCOPES.join(", ")}
  token revoke --jti ID revoke one token this server issued
  token revoke --user ID
                        revoke every token of that user issued until now
  user add --user ID    add a person who may sign in to the built-in authorization server;
                        the password is read from standard input (one line, 10+ characters)
  user passwd --user ID change a password (standard input); signs out their apps and sessions
  user remove --user ID remove a person and revoke their tokens
  user list             list the people who may sign in
  backup --out FILE [--force]
                        write a consistent backup of the database while the server runs:
                        one file, mode 0600, with a manifest; never the master key
  restore --from FILE   restore a backup into --data-dir, which must be empty or absent;
                        the master key (CORPUS_MASTER_KEY or its file) must be the one
                        the backup's data was sealed with
  check                 check this machine: data dir, database, sqlite-vec, embedding model
  version               print the version
  help                  print this help (also --help, -h)

Options (every command):
  --data-dir DIR        data folder (overrides CORPUS_DATA_DIR; default ./corpus-data)

Configuration (environment):
${describeConfig()
  .map((v) => `  ${v.name.padEnd(38)} ${v.description}${v.default !== undefined && v.default !== "" ? ` [${v.default}]` : ""}`)
  .join("\n")}
`;

export class UsageError extends Error {}

export interface ParsedArgs {
  command: string;
  options: Record<string, string>;
}

/** Options each command takes besides --data-dir. */
const COMMAND_OPTIONS: Record<string, string[]> = {
  serve: [],
  check: [],
  version: [],
  "token create": ["user", "scopes", "ttl"],
  "token revoke": ["jti", "user"],
  "user add": ["user"],
  "user passwd": ["user"],
  "user remove": ["user"],
  "user list": [],
  backup: ["out", "force"],
  restore: ["from"],
};

/** Options that take no value (present means true). */
const FLAGS = new Set(["force"]);

export function parseArgs(argv: string[]): ParsedArgs {
  const options: Record<string, string> = {};
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--help" || arg === "-h") return { command: "help", options };
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
      const value = eq > 0 ? arg.slice(eq + 1) : FLAGS.has(name) ? "true" : argv[++i];
      if (value === undefined || value === "") throw new UsageError(`--${name} needs a value`);
      options[name] = value;
    } else positional.push(arg);
  }
  const twoWords = positional[0] === "token" || positional[0] === "user";
  const command = twoWords ? `${positional[0]} ${positional[1] ?? ""}`.trim() : (positional[0] ?? "serve");
  const used = twoWords ? 2 : 1;
  if (positional.length > used) throw new UsageError(`unexpected argument ${positional[used]}`);
  const allowed = COMMAND_OPTIONS[command];
  if (!allowed) throw new UsageError(`unknown command ${command}`);
  for (const name of Object.keys(options)) {
    if (name !== "data-dir" && !allowed.includes(name)) throw new UsageError(`unknown option --${name} for ${command}`);
  }
  return { command, options };
}

function configFor(args: ParsedArgs): Config {
  return loadConfig(process.env, args.options["data-dir"] ? { CORPUS_DATA_DIR: args.options["data-dir"] } : {});
}

export async function main(argv: string[]): Promise<number> {
  // Everything the service writes (database, WAL, keys) is readable by its owner only.
  process.umask(0o077);
  let args: ParsedArgs;
  try {
    args = parseArgs(argv);
  } catch (error) {
    console.error(`corpus: ${(error as Error).message}; see corpus --help`);
    return 2;
  }
  try {
    switch (args.command) {
      case "help":
        process.stdout.write(USAGE);
        return 0;
      case "version":
        console.log(SERVICE_VERSION);
        return 0;
      case "token create":
      case "token revoke": {
        const { tokenCommand } = await import("./auth/cli");
        console.log(await tokenCommand(args.command, args.options, configFor(args)));
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
      case "restore": {
        const required = args.command === "backup" ? "out" : "from";
        if (!args.options[required]) throw new UsageError(`${args.command} needs --${required} FILE`);
        if (args.options.force !== undefined && args.options.force !== "true") throw new UsageError("--force takes no value");
        const { backupCommand } = await import("./backup/command");
        console.log(JSON.stringify(await backupCommand(args.command, args.options, configFor(args)), null, 2));
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
