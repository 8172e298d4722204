// A mail as the IMAP connector gives it to ranking, for tests of scoring: an id, a subject and a text.
import type { SourceRecord } from "../../src/connectors/types";

export const mailRecord = (id: string, subject: string, content: string): SourceRecord => ({
  id,
  title: subject,
  content,
  source_url: `imap://x/INBOX;UID=${id}`,
  date: "2001-05-01T00:00:00.000Z",
  type: "email",
  path: `INBOX/${id}`,
  metadata: { message_id: `<${id}@example.com>`, from: "someone@example.com" },
});
