// The token endpoint (OAuth 2.1 section 3.2): the client authenticated, the resource checked
// (RFC 8707), then the grant type's handler from this table.
import { authenticateClient } from "../client-auth";
import { type OAuthContext, singleValued } from "../context";
import { InvalidRequest, InvalidTarget, UnsupportedGrantType } from "../errors";
import type { Client, Clients } from "../registration";
import { authorizationCodeGrant } from "./authorization-code";
import { refreshTokenGrant } from "./refresh-token";

type Grant = (ctx: OAuthContext, client: Client, form: URLSearchParams) => Promise<Record<string, unknown>>;

/** The grant types this server answers, each with its handler. */
const GRANTS = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
} as const satisfies Record<string, Grant>;

export type GrantType = keyof typeof GRANTS;
/** What a client may register and the metadata document lists (grant_types_supported). */
export const GRANT_TYPES = Object.keys(GRANTS) as GrantType[];

const isGrantType = (name: string | null): name is GrantType => name !== null && Object.hasOwn(GRANTS, name);

/** A token request from `address`: the grant's answer, or the OAuthError it is refused with. */
export async function token(
  ctx: OAuthContext,
  clients: Clients,
  form: URLSearchParams,
  authorization: string | null,
  address: string,
): Promise<Record<string, unknown>> {
  singleValued(form, (m) => new InvalidRequest(m));
  const client = await authenticateClient(clients, form, authorization, address);
  const resource = form.get("resource");
  if (resource !== null && !ctx.resources.has(resource))
    throw new InvalidTarget(`this server issues tokens for ${ctx.config.resourceUrl} only`);
  const grantType = form.get("grant_type");
  if (grantType === null) throw new InvalidRequest("grant_type is missing");
  if (!isGrantType(grantType)) throw new UnsupportedGrantType(`grant_type must be ${GRANT_TYPES.join(" or ")}`);
  return GRANTS[grantType](ctx, client, form);
}
