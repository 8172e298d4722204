// The OAuth errors of the built-in authorization server, one class per error code (RFC 6749
// section 5.2, RFC 7591 section 3.2.2, RFC 8707): thrown by the endpoints, answered by the
// routes as `{ error, error_description }` with the class's status.

/** An OAuth error: its code, what the client is told (the message), the HTTP status. */
export abstract class OAuthError extends Error {
  abstract readonly error: string;
  /**
   * What the operator's log is told and the client never is (a metadata document's TLS or
   * parse error, say): the message stays generic.
   */
  detail?: string;

  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export class InvalidRequest extends OAuthError {
  readonly error = "invalid_request";
}

/** An unknown or unauthenticated client: 401 at the token and revocation endpoints, 400 on a page. */
export class InvalidClient extends OAuthError {
  readonly error = "invalid_client";
}

export class InvalidGrant extends OAuthError {
  readonly error = "invalid_grant";
}

export class InvalidScope extends OAuthError {
  readonly error = "invalid_scope";
}

export class InvalidTarget extends OAuthError {
  readonly error = "invalid_target";
}

export class UnsupportedGrantType extends OAuthError {
  readonly error = "unsupported_grant_type";
}

export class UnsupportedResponseType extends OAuthError {
  readonly error = "unsupported_response_type";
}

export class InvalidRedirectUri extends OAuthError {
  readonly error = "invalid_redirect_uri";
}

export class InvalidClientMetadata extends OAuthError {
  readonly error = "invalid_client_metadata";
}

/** Too much at once (429, with the seconds to wait) or too much kept (503). */
export class TemporarilyUnavailable extends OAuthError {
  readonly error = "temporarily_unavailable";

  constructor(
    message: string,
    status: 429 | 503,
    readonly retryAfter?: number,
  ) {
    super(message, status);
  }
}
