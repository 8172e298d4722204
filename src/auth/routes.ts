// `GET /.well-known/jwks.json` (D4): the public key of this server's tokens.
import { Elysia, t } from "elysia";
import { constantBody } from "../http/response";
import type { AuthService } from "./service";

export const authRoutes = (auth: AuthService) => {
  // The key is loaded once at start: the document is serialised once.
  const jwks = constantBody(auth.jwks());
  return new Elysia({ name: "corpus/auth" }).get("/.well-known/jwks.json", () => jwks, {
    response: t.Object({ keys: t.Array(t.Record(t.String(), t.Unknown())) }),
    detail: { tags: ["metadata"], summary: "Public keys of the tokens this server issues (JWKS)" },
  });
};
