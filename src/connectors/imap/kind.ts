// `imap` (D18, D19): a mailbox on an IMAP server, read where it is (no local index).
import { DomainError } from "../../errors";
import { defineKind } from "../kind";
import { ImapConfigSchema } from "./config";
import { ImapConnector } from "./connector";

/** What the stored password is bound to: changing any of these needs the password again. */
const SECRET_BOUND = ["host", "port", "secure", "user"] as const;
// An OAuth grant is bound to these and its provider too, but kept apart from the config: the
// connector uses it only while they are what they were when access was granted (oauth/grants.ts).

export const imapKind = defineKind({
  title: "IMAP mailbox",
  schema: ImapConfigSchema,
  indexedLocally: false,
  datesAreFileTimes: false,
  create: (config, { pin, oauth }) => new ImapConnector(config, { pin }, oauth),
  redact: ({ password: _password, ...shown }) => shown,
  remoteHost: (config) => ({ host: config.host, field: "config.host" }),
  check(config) {
    if (config.oauth !== undefined && config.password)
      throw new DomainError("invalid", "config.password: a connector signs in with a password or with OAuth (config.oauth), not both");
    if (config.oauth === undefined && config.password === undefined)
      throw new DomainError("invalid", "config.password: expected a password, or config.oauth naming an OAuth provider");
  },
  // A kept password goes only where it went before: a token that may change connectors must
  // not be able to send it to another server, or over plain text.
  keepSecrets(change, stored) {
    if (change.password !== undefined) return change;
    // Turning to OAuth: the stored password is dropped; its grant is asked for afterwards.
    if (typeof change.oauth === "string") return { ...change, password: "" };
    // An OAuth connector has no password to keep: its grant is bound where it was given (grants.ts).
    if (stored.oauth !== undefined && !("oauth" in change)) return change;
    const moved = SECRET_BOUND.filter((k) => k in change && !Bun.deepEquals(change[k], stored[k]));
    if (moved.length)
      throw new DomainError(
        "invalid",
        `config.password: give the password again to change ${moved.join(", ")}; the stored one is sent only where it was sent before`,
      );
    return change;
  },
  form: [
    { name: "host", label: "Host", input: "text", placeholder: "imap.example.com" },
    { name: "port", label: "Port", input: "number", initial: 993 },
    { name: "secure", label: "TLS", input: "checkbox", initial: true },
    { name: "user", label: "User", input: "text" },
    { name: "password", label: "Password", input: "password" },
    { name: "oauth", label: "OAuth provider (instead of a password)", input: "text", placeholder: "an id the operator lists" },
    { name: "mailbox", label: "Mailbox", input: "text", initial: "INBOX" },
  ],
});
