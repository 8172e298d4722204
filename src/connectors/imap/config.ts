// The config of an `imap` connector: the schema users send and the type the connector reads.
import { type Static, Type } from "@sinclair/typebox";

export const ImapConfigSchema = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253 }),
    port: Type.Integer({ minimum: 1, maximum: 65535, default: 993 }),
    secure: Type.Boolean({ default: true, description: "TLS from the start (port 993)" }),
    user: Type.String({ minLength: 1, maxLength: 256 }),
    password: Type.String({ maxLength: 1024, description: "stored encrypted, never returned" }),
    mailbox: Type.String({ minLength: 1, maxLength: 256, default: "INBOX" }),
  },
  { additionalProperties: false },
);
export type ImapConfig = Static<typeof ImapConfigSchema>;
