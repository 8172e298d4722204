// Errors a room throws for its caller to be told of, named by what they mean rather than by an
// HTTP status: the room knows nothing of HTTP, and http/errors.ts maps each kind to its status
// in one table (D15's { type, message } body, or a feature's own shape).

export const DOMAIN_ERROR_KINDS = ["invalid", "unauthorized", "forbidden", "not_found", "conflict", "unavailable"] as const;
export type DomainErrorKind = (typeof DOMAIN_ERROR_KINDS)[number];

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    /** Headers the answer carries (e.g. WWW-Authenticate with a refused token). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}
