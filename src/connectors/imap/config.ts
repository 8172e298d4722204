// The config of an `imap` connector: the schema users send and the type the connector reads.
import { type Static, Type } from "@sinclair/typebox";
import { CONNECTOR_ID_PATTERN } from "../../ids";

export const ImapConfigSchema = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253 }),
    port: Type.Integer({ minimum: 1, maximum: 65535, default: 993 }),
    secure: Type.Boolean({ default: true, description: "TLS from the start (port 993)" }),
    user: Type.String({ minLength: 1, maxLength: 256 }),
    password: Type.Optional(Type.String({ maxLength: 1024, description: "stored encrypted, never returned; none with oauth" })),
    oauth: Type.Optional(
      Type.String({
        pattern: CONNECTOR_ID_PATTERN,
        description:
          "sign in with OAuth 2.0 instead of a password: the id of a provider the operator configured; access is then granted with POST /v1/connectors/{id}/oauth",
      }),
    ),
    mailbox: Type.String({ minLength: 1, maxLength: 256, default: "INBOX" }),
  },
  { additionalProperties: false },
);
export type ImapConfig = Static<typeof ImapConfigSchema>;

/** An OAuth connector's config (issue 38). */
export const signsInWithOAuth = (config: ImapConfig): config is ImapConfig & { oauth: string } => config.oauth !== undefined;

/** What an OAuth connector's grant is bound to (oauth/grants.ts): its access tokens go to no other server, user or provider. */
export const grantBinding = ({ host, port, secure, user, oauth }: ImapConfig & { oauth: string }) => ({
  host,
  port,
  secure,
  user,
  provider: oauth,
});
