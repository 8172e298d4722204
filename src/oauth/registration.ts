// The clients of the built-in authorization server: registered dynamically (RFC 7591), or
// named by the https URL of their metadata document (metadata-document.ts). Both kinds fill
// one table, under one cap (MAX_CLIENTS); one address introduces at most
// REGISTRATIONS_PER_HOUR of either an hour (a registration, or a metadata document fetched: a
// new client_id URL at /oauth/authorize costs an outbound fetch), and every address together
// CLIENTS_PER_HOUR. A full table makes room by dropping clients never used (no grant) older
// than UNUSED_CLIENT_SECONDS, oldest first: ~500 addresses filled it for a day (issue 35),
// and the hourly bound keeps most of it old enough to be dropped.
import { randomBytes } from "node:crypto";
import { type Awaitable, andThen } from "../store/shared";
import { type OAuthContext, secondsOf, secret } from "./context";
import { InvalidClientMetadata, InvalidRedirectUri, TemporarilyUnavailable } from "./errors";
import { GRANT_TYPES } from "./grants";
import {
  fetchMetadataDocument,
  isMetadataDocumentId,
  METADATA_DOCUMENT_TTL_SECONDS,
  type MetadataDocumentOptions,
  metadataDocumentUrl,
} from "./metadata-document";
import { redirectUriProblem } from "./redirect-uris";
import { type ClientRow, sha256 } from "./store";
import { type Allowance, WindowLimit } from "./throttle";

export const MAX_CLIENTS = 10_000;
/** Clients one address may introduce in an hour: the table of clients cannot be filled, nor the server made to fetch, from one place. */
export const REGISTRATIONS_PER_HOUR = 20;
/** Clients every address together may introduce in an hour: a fifth of the table, so that most of a full one is old enough to drop. */
export const CLIENTS_PER_HOUR = MAX_CLIENTS / 5;
/** A client never used (no grant) this long after it was introduced is dropped when the table is full. */
export const UNUSED_CLIENT_SECONDS = 3600;
/** Clients dropped at once when the table is full: room for the next ones too, without a scan each time. */
const DROP_AT_ONCE = 100;
/** The allowance every address shares (WindowLimit's key). */
const EVERY_ADDRESS = "*";
/** Metadata documents being fetched at once, whoever asked: each is an outbound connection. */
const MAX_DOCUMENT_FETCHES = 16;
export const AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"] as const;

export interface Client {
  id: string;
  kind: ClientRow["kind"];
  name: string;
  redirectUris: string[];
  authMethod: string;
  secretHash: string | null;
  grantTypes: string[];
}

const clientOf = (row: ClientRow): Client => ({
  id: row.client_id,
  kind: row.kind,
  name: row.name,
  redirectUris: JSON.parse(row.redirect_uris) as string[],
  authMethod: row.auth_method,
  secretHash: row.secret_hash,
  grantTypes: JSON.parse(row.grant_types) as string[],
});

export class Clients {
  private readonly introduced: Allowance;
  private readonly introducedByAll: Allowance;
  /** Metadata documents being fetched, by client_id: requests for the same one wait for one fetch. */
  private readonly fetching = new Map<string, Promise<ClientRow>>();

  constructor(
    private readonly ctx: OAuthContext,
    private readonly documents: MetadataDocumentOptions = {},
  ) {
    // Shared, counted across the nodes (D33): a balancer of N nodes gives an address no more.
    const allowance = (name: string, limit: number) =>
      ctx.throttles?.allowance(name, limit, 3_600_000) ?? new WindowLimit(limit, 3_600_000, ctx.now);
    this.introduced = allowance("clients-per-address", REGISTRATIONS_PER_HOUR);
    this.introducedByAll = allowance("clients", CLIENTS_PER_HOUR);
  }

  /** Counts one client introduced from `address`; refuses past its hour's allowance, or every address's. */
  private admit(address: string, what: string): Awaitable<void> {
    // Counted in the caller's step by the embedded allowance; the shared one answers later.
    return andThen(this.introduced.take(address), (wait) => {
      if (wait > 0) throw new TemporarilyUnavailable(`too many ${what} from this address; try again in ${wait} s`, 429, wait);
      return andThen(this.introducedByAll.take(EVERY_ADDRESS), (waitAll) => {
        if (waitAll > 0) throw new TemporarilyUnavailable(`too many new clients; try again in ${waitAll} s`, 429, waitAll);
      });
    });
  }

  /** Room for one more client: a full table drops clients never used, older than UNUSED_CLIENT_SECONDS, first. */
  private async checkRoom(): Promise<void> {
    const { store } = this.ctx;
    if ((await store.countClients()) < MAX_CLIENTS) return;
    await store.dropUnusedClients(secondsOf(this.ctx) - UNUSED_CLIENT_SECONDS, DROP_AT_ONCE);
    if ((await store.countClients()) >= MAX_CLIENTS) throw new TemporarilyUnavailable("too many registered clients; try again later", 503);
  }

  /** Dynamic client registration (RFC 7591): validates the metadata, answers the client information. */
  async register(meta: Record<string, unknown>, address: string): Promise<Record<string, unknown>> {
    const redirectUris = meta.redirect_uris;
    if (
      !Array.isArray(redirectUris) ||
      redirectUris.length === 0 ||
      redirectUris.length > 10 ||
      !redirectUris.every((u) => typeof u === "string" && u.length <= 2000)
    ) {
      throw new InvalidRedirectUri("redirect_uris: 1 to 10 URIs are required");
    }
    for (const uri of redirectUris as string[]) {
      const problem = redirectUriProblem(uri);
      if (problem) throw new InvalidRedirectUri(`redirect_uris: ${problem}`);
    }
    const authMethod = meta.token_endpoint_auth_method ?? "client_secret_basic";
    if (typeof authMethod !== "string" || !(AUTH_METHODS as readonly string[]).includes(authMethod)) {
      throw new InvalidClientMetadata(`token_endpoint_auth_method: one of ${AUTH_METHODS.join(", ")}`);
    }
    const grantTypes = meta.grant_types ?? ["authorization_code"];
    if (!Array.isArray(grantTypes) || !grantTypes.every((g) => (GRANT_TYPES as readonly unknown[]).includes(g))) {
      throw new InvalidClientMetadata(`grant_types: ${GRANT_TYPES.join(" and ")} only`);
    }
    const responseTypes = meta.response_types ?? ["code"];
    if (!Array.isArray(responseTypes) || !responseTypes.every((r) => r === "code"))
      throw new InvalidClientMetadata("response_types: code only");
    const name =
      typeof meta.client_name === "string" && meta.client_name.trim() ? meta.client_name.trim().slice(0, 100) : "an unnamed application";
    await this.admit(address, "registrations");
    await this.checkRoom();
    const clientId = `corpus-${randomBytes(16).toString("base64url")}`;
    const clientSecret = authMethod === "none" ? undefined : secret();
    const at = secondsOf(this.ctx);
    await this.ctx.store.putClient({
      client_id: clientId,
      kind: "registered",
      name,
      redirect_uris: JSON.stringify(redirectUris),
      auth_method: authMethod,
      secret_hash: clientSecret ? sha256(clientSecret) : null,
      grant_types: JSON.stringify(grantTypes),
      created_at: at,
      fetched_at: at,
    });
    return {
      client_id: clientId,
      ...(clientSecret ? { client_secret: clientSecret, client_secret_expires_at: 0 } : {}),
      client_id_issued_at: at,
      client_name: name,
      redirect_uris: redirectUris,
      token_endpoint_auth_method: authMethod,
      grant_types: grantTypes,
      response_types: ["code"],
    };
  }

  /**
   * A client by id: registered here, or the metadata document its https URL names (fetched for
   * `address`, counted against its allowance and the cap like a registration, kept an hour).
   */
  async find(clientId: string, address: string): Promise<Client | undefined> {
    let row = await this.ctx.store.client(clientId);
    if (isMetadataDocumentId(clientId) && (!row || row.fetched_at + METADATA_DOCUMENT_TTL_SECONDS < secondsOf(this.ctx)))
      row = await this.fetchDocument(clientId, address, !row);
    return row ? clientOf(row) : undefined;
  }

  private async fetchDocument(clientId: string, address: string, isNew: boolean): Promise<ClientRow> {
    const url = metadataDocumentUrl(clientId);
    const pending = this.fetching.get(clientId);
    if (pending) return pending;
    if (isNew) await this.checkRoom();
    await this.admit(address, "client metadata documents");
    // Another request may have begun the same fetch while the table and the allowance were counted.
    const begun = this.fetching.get(clientId);
    if (begun) return begun;
    if (this.fetching.size >= MAX_DOCUMENT_FETCHES)
      throw new TemporarilyUnavailable("too many client metadata documents are being read; try again later", 503);
    const fetched = fetchMetadataDocument(clientId, url, this.documents, secondsOf(this.ctx))
      .then(async (row) => {
        await this.ctx.store.putClient(row);
        return row;
      })
      .finally(() => this.fetching.delete(clientId));
    this.fetching.set(clientId, fetched);
    return fetched;
  }
}
