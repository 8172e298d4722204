// Client ID Metadata Documents (MCP authorization 2025-11-25): a client_id that is an https
// URL names the JSON document describing the client, whose `client_id` is that URL. Fetched
// through the pinned, address-checked client of src/net (public addresses only by default), at
// most 5 KiB in 5 s. Whatever went wrong (DNS, TLS, status, JSON) is the operator's to read in
// the log (OAuthError.detail); a person or client is told only that the document could not be
// read (issue 35).
import { getPinned } from "../net/get";
import { type AddressPolicy, PUBLIC_ONLY, pinHost, type Resolver } from "../net/pin";
import { InvalidClient } from "./errors";
import { GRANT_TYPES } from "./grants";
import { redirectUriProblem } from "./redirect-uris";
import type { ClientRow } from "./store";

export const METADATA_DOCUMENT_TTL_SECONDS = 3600;
const METADATA_DOCUMENT_MAX_BYTES = 5 * 1024;
const METADATA_DOCUMENT_TIMEOUT_MS = 5000;
export const METADATA_DOCUMENT_UNREADABLE = "the client's metadata document could not be read";

export interface MetadataDocumentOptions {
  /** Which addresses a client metadata document may be fetched from (public only by default). */
  documentPolicy?: AddressPolicy;
  resolve?: Resolver;
  /** Extra CA certificates for metadata documents (tests). */
  documentCa?: string;
}

/** Whether `clientId` names a metadata document (an https URL), as opposed to a registered client. */
export const isMetadataDocumentId = (clientId: string): boolean => clientId.startsWith("https://");

/** The URL of a metadata document's client_id: https, with a path, without fragment or credentials. */
export function metadataDocumentUrl(clientId: string): URL {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new InvalidClient("client_id is not a URL");
  }
  if (url.protocol !== "https:" || url.hash || url.username || url.password || url.pathname === "/")
    throw new InvalidClient("a client_id URL must be https with a path, without fragment or credentials");
  return url;
}

function unreadable(detail: string): InvalidClient {
  const error = new InvalidClient(METADATA_DOCUMENT_UNREADABLE);
  error.detail = detail;
  return error;
}

/** Fetches and checks the document of `clientId` (at `url`, its metadataDocumentUrl): the client's row, to be kept an hour. */
export async function fetchMetadataDocument(clientId: string, url: URL, options: MetadataDocumentOptions, at: number): Promise<ClientRow> {
  let doc: Record<string, unknown>;
  try {
    const pinned = await pinHost(url.hostname, options.documentPolicy ?? PUBLIC_ONLY, options.resolve);
    const answer = await getPinned(url, pinned, {
      timeoutMs: METADATA_DOCUMENT_TIMEOUT_MS,
      maxBytes: METADATA_DOCUMENT_MAX_BYTES,
      ...(options.documentCa ? { ca: options.documentCa } : {}),
    });
    if (answer.status !== 200) throw new Error(`status ${answer.status}`);
    doc = JSON.parse(answer.body) as Record<string, unknown>;
    if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw new Error("not a JSON object");
  } catch (error) {
    throw unreadable(error instanceof Error ? error.message : String(error));
  }
  if (doc.client_id !== clientId) throw new InvalidClient("the metadata document's client_id is not its URL");
  const method = doc.token_endpoint_auth_method ?? "none";
  if (method !== "none") throw new InvalidClient("a metadata-document client authenticates with none (private_key_jwt is not supported)");
  const uris = doc.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10 || !uris.every((u) => typeof u === "string" && !redirectUriProblem(u)))
    throw new InvalidClient("the metadata document's redirect_uris are missing or not allowed");
  return {
    client_id: clientId,
    kind: "metadata_document",
    name: typeof doc.client_name === "string" && doc.client_name.trim() ? doc.client_name.trim().slice(0, 100) : url.hostname,
    redirect_uris: JSON.stringify(uris),
    auth_method: "none",
    secret_hash: null,
    grant_types: JSON.stringify(GRANT_TYPES),
    created_at: at,
    fetched_at: at,
  };
}
