// `corpus user add|passwd|remove|list` (D27): the operator's list of people who may log in to
// the built-in authorization server. A password is read from standard input (one line), never
// from an argument, which other users of the machine could read in the process list. People
// signed in by an upstream OpenID Connect provider are listed too, and removed the same way.
import type { Config } from "../config";
import { createLogger } from "../log";
import { createServices } from "../services";
import { addAccount, changePassword, removeAccount } from "./operations";
import { AccountError } from "./store";

async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("password: ");
  const text = await new Response(Bun.stdin.stream()).text();
  const line = text.split(/\r?\n/)[0] ?? "";
  if (!line) throw new AccountError("no password on standard input");
  return line;
}

export async function userCommand(command: string, options: Record<string, string>, config: Config): Promise<string> {
  const services = await createServices(
    config,
    createLogger("ERROR", () => {}),
  );
  try {
    const accounts = services.accounts;
    const id = options.user!; // required by the CLI's parser for all but "user list"
    switch (command) {
      case "user add":
        return await addAccount(services, id, await readPassword(), options.operator === "true");
      case "user passwd":
        return await changePassword(services, id, await readPassword());
      case "user remove":
        return await removeAccount(services, id);
      case "user list":
        return accounts
          .list()
          .map(
            (a) =>
              `${a.id}\tcreated ${new Date(a.createdAt * 1000).toISOString()}${a.operator ? "\toperator" : ""}${a.upstream ? `\tupstream ${a.upstream.issuer} sub ${a.upstream.subject}${a.upstream.name ? ` (${a.upstream.name})` : ""}` : ""}`,
          )
          .join("\n");
      default:
        throw new AccountError(`unknown command ${command}`);
    }
  } finally {
    await services.close();
  }
}
