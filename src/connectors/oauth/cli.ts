// `corpus connector grant --id ID` (issue 38): the operator grants an IMAP connector of their
// file (CORPUS_CONNECTORS_FILE) access to its mailbox with OAuth, once. The command prints the
// provider's authorization URL (PKCE S256, as a user's grant) and waits for the address the
// provider sends the browser back to (corpus's callback, whose page, seeing a state of this
// command's, says to paste it here), or only its code; then exchanges the code, keeps the refresh
// token sealed with the operator's key as a user's is with theirs, and checks the mailbox. A
// server running on the same data folder uses the grant at its next sign-in.
import type { Config } from "../../config";
import { createLogger } from "../../log";
import { createServices } from "../../services";
import { GrantFlowError, PENDING_TTL_MS, TERMINAL_STATE_PREFIX } from "./grants";

/** The longest line read (an address with its code and state is well under this). */
const MAX_LINE = 16 * 1024;

/** One line of standard input, without waiting for its end; undefined at its end. */
async function readLine(): Promise<string | undefined> {
  const decoder = new TextDecoder();
  let text = "";
  const reader = Bun.stdin.stream().getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    text += decoder.decode(read.value, { stream: true });
    const nl = text.indexOf("\n");
    if (nl >= 0) return text.slice(0, nl).trim();
    if (text.length > MAX_LINE) throw new GrantFlowError("the line pasted is too long");
  }
  return text.trim() || undefined;
}

/** What was pasted as the provider's answer: the address it sent the browser to (its query), or only the code. */
export function pastedAnswer(line: string, state: string): URLSearchParams {
  if (!/^https?:\/\//i.test(line)) return new URLSearchParams({ state, code: line });
  let params: URLSearchParams;
  try {
    params = new URL(line).searchParams;
  } catch {
    throw new GrantFlowError("the address pasted cannot be read");
  }
  if (params.get("state") !== state) throw new GrantFlowError("the address pasted answers another grant than this one; start again");
  return params;
}

export async function connectorGrantCommand(options: Record<string, string>, config: Config): Promise<string> {
  const services = await createServices(
    config,
    createLogger("ERROR", () => {}),
  );
  try {
    const id = options.id!; // required by the CLI's parser
    // The operator at the terminal: nothing else to ask while the grant waits.
    const started = services.connectors.beginOperatorGrant(id, () => {}, { statePrefix: TERMINAL_STATE_PREFIX });
    const state = new URL(started.authorize_url).searchParams.get("state")!;
    process.stderr.write(`Open this address in a browser and grant access to the mailbox (within ${PENDING_TTL_MS / 60_000} minutes):\n`);
    process.stdout.write(`${started.authorize_url}\n`);
    process.stderr.write(
      `The provider then sends the browser to ${started.redirect_uri}?code=…: paste that whole address here (or only its code), then Enter.\n`,
    );
    const line = await readLine();
    if (!line) throw new GrantFlowError("nothing was pasted; no access was granted");
    const done = await services.connectors.grants.finish(pastedAnswer(line, state));
    const checked = await services.connectors.checkOperatorConnector(id);
    const granted = `access granted: the operator's connector ${done.id} reads the mailbox ${done.user} with ${done.provider}`;
    return checked.status === "error"
      ? `${granted}; it does not answer yet: ${checked.reason ?? "no reason given"}`
      : `${granted}; ${checked.records ?? 0} messages`;
  } finally {
    await services.close();
  }
}
