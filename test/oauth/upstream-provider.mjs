// A real OpenID Connect provider on loopback for the upstream tests (issue 17): panva's
// certified `oidc-provider`, run under Node as a child process of the test. Its development
// interactions are the sign-in and consent pages (any login name is accepted as the `sub`).
// Reads UPSTREAM_CLIENT_ID, UPSTREAM_CLIENT_SECRET and UPSTREAM_REDIRECT_URI; prints one JSON
// line `{"issuer": ...}` once it listens on 127.0.0.1, and ends when its standard input closes.
import { createServer } from "node:http";
import Provider from "oidc-provider";

const server = createServer();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: process.env.UPSTREAM_CLIENT_ID,
      client_secret: process.env.UPSTREAM_CLIENT_SECRET,
      redirect_uris: [process.env.UPSTREAM_REDIRECT_URI],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    },
  ],
  pkce: { required: () => true },
  findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id, preferred_username: id }) }),
  claims: { openid: ["sub"], profile: ["preferred_username"] },
  features: { devInteractions: { enabled: true } },
  cookies: { keys: ["upstream-provider-test-cookie-key"] },
});
// The development pages warn on every start; the test reads only the first line of stdout.
provider.on("server_error", (_ctx, error) => process.stderr.write(`server_error ${error?.message}\n`));
server.on("request", provider.callback());
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
