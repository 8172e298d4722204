// `/.well-known/oauth-protected-resource` and `/.well-known/oauth-authorization-server`
// (second document parts 2 and 4). The protected-resource document is also served at the
// path-suffixed address of the MCP endpoint, `/.well-known/oauth-protected-resource/mcp`
// (RFC 9728 section 3.1; D28), where 2026-07-28 clients look first: the same document, since
// /mcp is one of this resource's routes.
import { Elysia } from "elysia";
import type { Config } from "../config";
import { errorBody } from "../http/errors";
import { ErrorBody } from "../http/model";
import { constantBody } from "../http/response";
import { AuthorizationServerMetadata, ProtectedResourceMetadata } from "./model";
import { authorizationServerMetadata, MetadataConfigError, PROTECTED_RESOURCE_PATH, protectedResourceMetadata } from "./service";

export const metadataRoutes = (config: Config) => {
  // The documents depend on the configuration only: built (or found wrong) once, at start. A
  // handler of the form `() => value` also stays synchronous: Elysia reads `=> f(` as async.
  const serve = <T>(build: (c: Config) => T) => {
    let document: T;
    try {
      document = constantBody(build(config) as object) as T;
    } catch (error) {
      if (!(error instanceof MetadataConfigError)) throw error;
      const failure = constantBody(errorBody(500, `OAuth configuration error: ${error.message}`));
      return ({ set }: { set: { status?: number | string } }) => {
        set.status = 500;
        return failure;
      };
    }
    return () => document;
  };
  const detail = (summary: string) => ({ tags: ["metadata"], summary });
  const protectedResource = serve(protectedResourceMetadata);
  return new Elysia({ name: "corpus/metadata" })
    .get(PROTECTED_RESOURCE_PATH, protectedResource, {
      response: { 200: ProtectedResourceMetadata, 500: ErrorBody },
      detail: detail("Protected-resource metadata (RFC 9728)"),
    })
    .get(`${PROTECTED_RESOURCE_PATH}/mcp`, protectedResource, {
      response: { 200: ProtectedResourceMetadata, 500: ErrorBody },
      detail: detail("Protected-resource metadata at the MCP endpoint's path-suffixed address (RFC 9728 section 3.1)"),
    })
    .get("/.well-known/oauth-authorization-server", serve(authorizationServerMetadata), {
      response: { 200: AuthorizationServerMetadata, 500: ErrorBody },
      detail: detail("Authorization-server metadata (RFC 8414)"),
    });
};
