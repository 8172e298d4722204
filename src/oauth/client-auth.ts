// How a client proves itself at the token and revocation endpoints (OAuth 2.1 section 2.4):
// client_secret_basic, client_secret_post, or none for a public client, as it registered.
import { constantEqual } from "./context";
import { InvalidClient, InvalidRequest } from "./errors";
import type { Client, Clients } from "./registration";
import { sha256 } from "./store";

/** The client of a token or revocation request from `address`, authenticated as it registered. */
export async function authenticateClient(
  clients: Clients,
  form: URLSearchParams,
  authorization: string | null,
  address: string,
): Promise<Client> {
  let id = form.get("client_id");
  let presented: string | undefined;
  if (authorization?.toLowerCase().startsWith("basic ")) {
    const decoded = Buffer.from(authorization.slice(6).trim(), "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) throw new InvalidClient("malformed Basic credentials", 401);
    let basicId: string;
    try {
      basicId = decodeURIComponent(decoded.slice(0, colon));
      presented = decodeURIComponent(decoded.slice(colon + 1));
    } catch {
      throw new InvalidClient("malformed Basic credentials", 401);
    }
    if (id && id !== basicId) throw new InvalidRequest("client_id differs from the Basic credentials");
    // RFC 6749 section 2.3: a client uses one authentication method per request.
    if (form.get("client_secret") !== null) throw new InvalidRequest("client_secret in the body and Basic credentials: use one method");
    id = basicId;
  } else if (form.get("client_secret") !== null) presented = form.get("client_secret")!;
  if (!id) throw new InvalidClient("client_id is missing", 401);
  const client = await clients.find(id, address).catch((error: unknown) => {
    // A metadata document refused (its InvalidClient is a page's 400 at /oauth/authorize): here
    // it is a failed client authentication, 401 with its challenge as every other (errors.ts).
    if (!(error instanceof InvalidClient) || error.status === 401) throw error;
    const unauthorized = new InvalidClient(error.message, 401);
    if (error.detail !== undefined) unauthorized.detail = error.detail;
    throw unauthorized;
  });
  if (!client) throw new InvalidClient("unknown client", 401);
  if (client.secretHash) {
    if (presented === undefined || !constantEqual(sha256(presented), client.secretHash))
      throw new InvalidClient("client authentication failed", 401);
  } else if (presented !== undefined) throw new InvalidClient("this client has no secret", 401);
  return client;
}
