// `corpus user add|passwd|remove|list` (D27): the operator's list of people who may log in to
// the built-in authorization server. A password is read from standard input (one line), never
// from an argument, which other users of the machine could read in the process list. People
// signed in by an upstream OpenID Connect provider are listed too, and removed the same way.
// Only what accounts need is opened (as `corpus token` does): the database, the master key, the
// signing key; with CORPUS_DATABASE_URL the shared rooms (accounts, tokens, OAuth) are written
// in the shared PostgreSQL (D33), so every node sees the change at its next request. Adding and
// removing open every service instead (as the server does, without listening): a removal deletes
// the person's data through the path of DELETE /v1/delete_my_data, and an addition is refused
// under a name whose earlier data is still kept.
import { withAuthRoom } from "../auth/cli";
import type { Config } from "../config";
import { createLogger } from "../log";
import { OAuthServer } from "../oauth/service";
import { SqliteOAuthStore } from "../oauth/store";
import { PostgresOAuthStore } from "../oauth/store-postgres";
import { onDataFolder } from "../store/command-data-dir";
import { addAccount, changePassword, removeAccount } from "./operations";
import { AccountError, Accounts, SqliteAccountRecords } from "./store";
import { PostgresAccountRecords } from "./store-postgres";

async function passwordFromStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("password: ");
  const text = await new Response(Bun.stdin.stream()).text();
  const line = text.split(/\r?\n/)[0] ?? "";
  if (!line) throw new AccountError("no password on standard input");
  return line;
}

/** `readPassword`: standard input's first line (tests give their own). */
export async function userCommand(
  command: string,
  options: Record<string, string>,
  config: Config,
  readPassword: () => Promise<string> = passwordFromStdin,
): Promise<string> {
  // Only an addition may make a missing data folder (the first step of an install); the shared
  // database is reached before anything is written in the folder (onDataFolder).
  return await onDataFolder(config, command, command === "user add", async () => {
    if (command === "user add" || command === "user remove") {
      const { createServices } = await import("../services");
      const services = await createServices(
        config,
        createLogger("ERROR", () => {}),
      );
      try {
        const id = options.user!; // required by the CLI's parser
        return command === "user add"
          ? await addAccount(services, id, await readPassword(), options.operator === "true")
          : await removeAccount(services, id, options["delete-data"] === "true");
      } finally {
        await services.close();
      }
    }
    return await withAuthRoom(config, async ({ shared, db, auth }) => {
      const accounts = new Accounts(shared ? new PostgresAccountRecords(shared) : new SqliteAccountRecords(db));
      const oauth = new OAuthServer(config, auth, accounts, shared ? new PostgresOAuthStore(shared) : new SqliteOAuthStore(db));
      const rooms = { accounts, oauth, auth, db };
      const id = options.user!; // required by the CLI's parser for all but "user list"
      switch (command) {
        case "user passwd":
          return await changePassword(rooms, id, await readPassword());
        case "user list":
          return (await accounts.list())
            .map(
              (a) =>
                `${a.id}\tcreated ${new Date(a.createdAt * 1000).toISOString()}${a.operator ? "\toperator" : ""}${a.upstream ? `\tupstream ${a.upstream.issuer} sub ${a.upstream.subject}${a.upstream.name ? ` (${a.upstream.name})` : ""}` : ""}`,
            )
            .join("\n");
        default:
          throw new AccountError(`unknown command ${command}`);
      }
    });
  });
}
