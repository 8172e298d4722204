// `/.well-known/oauth-protected-resource` and `/.well-known/oauth-authorization-server`
// (second document parts 2 and 4).
import { Elysia } from "elysia";
import type { Config } from "../config";
import { errorBody } from "../http/errors";
import { ErrorBody } from "../http/model";
import { constantBody } from "../http/response";
import { AuthorizationServerMetadata, ProtectedResourceMetadata } from "./model";
import { authorizationServerMetadata, MetadataConfigError, protectedResourceMetadata } from "./service";

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
