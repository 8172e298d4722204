// Attack (this session's report, high): PATCH an IMAP connector's port while leaving the password
// out. The stored password was kept, and corpus logged in to the new server with it: whoever
// holds connectors:write (the panel token too) could learn a password it never saw (D20). Now a
// new host, port, TLS setting or user needs the password again; given again, it goes there.
import { expect, setDefaultTimeout, test } from "bun:test";
import { createServer } from "node:net";
import { bearer, patchJson, postJson, testApp } from "../helpers";

setDefaultTimeout(30_000);

function listener(greet: boolean) {
  const seen: string[] = [];
  const server = createServer((s) => {
    if (greet) s.write("* OK fake\r\n");
    s.on("data", (b) => {
      const text = b.toString();
      seen.push(text);
      for (const line of text.split("\r\n")) {
        const tag = line.split(" ")[0];
        if (!tag) continue;
        if (/CAPABILITY/i.test(line)) s.write(`* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n${tag} OK done\r\n`);
        else if (/AUTHENTICATE/i.test(line)) s.write("+ \r\n");
        else if (/^[A-Za-z0-9+/=]+$/.test(line)) {
          seen.push(Buffer.from(line, "base64").toString());
          s.write("* BYE\r\n");
        } else s.write(`${tag} NO nope\r\n`);
      }
    });
  });
  return new Promise<{ port: number; seen: string[]; close: () => void }>((res) =>
    server.listen(0, "127.0.0.1", () => res({ port: (server.address() as any).port, seen, close: () => server.close() })),
  );
}

test("a stored IMAP password is never sent to a server the PATCH names; given again, it is", async () => {
  const real = await listener(true);
  const evil = await listener(true);
  const t = await testApp({ CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1" });
  const tok = (await t.services.auth.issuer.issue("alice", ["connectors:read", "connectors:write"])).token;
  const imap = { host: "127.0.0.1", port: real.port, secure: false, user: "alice", password: "S3CRET-PW-xyz", mailbox: "INBOX" };
  await t.app.handle(postJson("/v1/connectors", { id: "mail", kind: "imap", config: imap }, bearer(tok)));
  const patch = (config: unknown) => t.app.handle(patchJson("/v1/connectors/mail", { config }, bearer(tok)));
  const refused = await patch({ port: evil.port });
  expect(refused.status).toBe(400);
  expect(evil.seen).toEqual([]);
  // The same change with the password: corpus logs in there (the fake server sees it), so the check above could fail.
  expect((await patch({ port: evil.port, password: "typed-again" })).status).toBe(200);
  expect(evil.seen.join("")).toContain("typed-again");
  expect(evil.seen.join("")).not.toContain("S3CRET-PW-xyz");
  real.close();
  evil.close();
  await t.services.close();
});
