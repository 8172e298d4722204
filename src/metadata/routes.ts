// `/.well-known/oauth-protected-resource` and `/.well-known/oauth-authorization-server`
// (second document parts 2 and 4).
import { Elysia } from "elysia";
import type { Config } from "../config";
import { errorBody } from "../http/errors";
import { ErrorBody } from "../http/model";
import { AuthorizationServerMetadata, ProtectedResourceMetadata } from "./model";
import { authorizationServerMetadata, MetadataConfigError, protectedResourceMetadata } from "./service";

export const metadataRoutes = (config: Config) => {
  const serve =
    <T>(build: (c: Config) => T) =>
    ({ set }: { set: { status?: number | string } }) => {
      try {
        return build(config);
      } catch (error) {
        if (!(error instanceof MetadataConfigError)) throw error;
        set.status = 500;
        return errorBody(500, `OAuth configuration error: ${error.message}`);
      }
    };
  const detail = (summary: string) => ({ tags: ["metadata"], summary });
  return new Elysia({ name: "corpus/metadata" })
    .get("/.well-known/oauth-protected-resource", serve(protectedResourceMetadata), {
      response: { 200: ProtectedResourceMetadata, 500: ErrorBody },
      detail: detail("Protected-resource metadata (RFC 9728)"),
    })
    .get("/.well-known/oauth-authorization-server", serve(authorizationServerMetadata), {
      response: { 200: AuthorizationServerMetadata, 500: ErrorBody },
      detail: detail("Authorization-server metadata (RFC 8414)"),
    });
};
