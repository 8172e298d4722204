// Issue 13 finding 8: refusals said what an internal name resolves to ("url: localhost
// (127.0.0.1) is a loopback address", "config.host: NAME (10.x.y.z) is a private address"), so
// anyone allowed to add a webhook or a connector could map the internal DNS without a single
// connection being made. Asked of the real app, with names the system resolver answers.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { bearer, postJson, testApp } from "../helpers";

setDefaultTimeout(60_000);

describe("a refused host name is not resolved for the caller (issue 13 finding 8)", () => {
  test("webhooks and connectors: 'is not a public address', never the address or its range", async () => {
    const { app, services } = await testApp();
    const token = (await services.auth.issuer.issue("mallory", ["connectors:read", "connectors:write"] as never)).token;
    const hook = await app.handle(postJson("/v1/webhooks", { url: "http://localhost:28080/x", events: ["user.deleted"] }, bearer(token)));
    expect(hook.status).toBe(400);
    const hookMessage = ((await hook.json()) as { message: string }).message;
    expect(hookMessage).toStartWith("url: localhost is not a public address; ");
    const mail = await app.handle(
      postJson(
        "/v1/connectors",
        { id: "m", kind: "imap", config: { host: "localhost", port: 143, secure: false, user: "u", password: "p" } },
        bearer(token),
      ),
    );
    expect(mail.status).toBe(403);
    const mailMessage = ((await mail.json()) as { message: string }).message;
    expect(mailMessage).toStartWith("config.host: localhost is not a public address; ");
    for (const message of [hookMessage, mailMessage]) {
      for (const leak of ["127.0.0.1", "::1", "is a loopback"])
        expect({ message, leak: message.includes(leak) }).toEqual({ message, leak: false });
    }
    // An address the caller wrote is theirs already: its range may be named.
    const literal = await app.handle(postJson("/v1/webhooks", { url: "http://10.1.2.3/x", events: ["user.deleted"] }, bearer(token)));
    expect(((await literal.json()) as { message: string }).message).toStartWith("url: 10.1.2.3 is a private address; ");
  });
});
