// `GET /.well-known/jwks.json` (D4): the public key of this server's tokens.
import { Elysia, t } from "elysia";
import type { AuthService } from "./service";

export const authRoutes = (auth: AuthService) =>
  new Elysia({ name: "corpus/auth" }).get("/.well-known/jwks.json", () => auth.jwks(), {
    response: t.Object({ keys: t.Array(t.Record(t.String(), t.Unknown())) }),
    detail: { tags: ["metadata"], summary: "Public keys of the tokens this server issues (JWKS)" },
  });
