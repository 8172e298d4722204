// The OAuth grant of a user's IMAP connector (issue 38): POST /v1/connectors/{id}/oauth answers
// the provider's authorization URL, and the provider sends the browser back to CALLBACK_PATH,
// a page of its own (no token: the state, single use, is what the grant is found by).
import { Elysia, t } from "elysia";
import { assertNotRevoked, type GuardServices, guard } from "../../auth/guard";
import { OPERATOR_OWNER } from "../../auth/subjects";
import { DomainError } from "../../errors";
import { JSON_PARSE } from "../../http/json-body";
import { ErrorBody } from "../../http/model";
import { infoOf } from "../../http/request-context";
import { escapeHtml, hidden, page } from "../../oauth/pages";
import { form, sentFromAnotherSite } from "../../oauth/routes";
import { grantBinding, signsInWithOAuth } from "../imap/config";
import type { ConnectorRegistry } from "../registry";
import { GrantFlowError, PENDING_TTL_MS, TERMINAL_STATE_PREFIX } from "./grants";
import { CALLBACK_PATH } from "./providers";

/** The page of a grant that did not go through, with the reason (never a stack). */
function notGranted(error: unknown): Response {
  const why = error instanceof GrantFlowError || error instanceof DomainError ? error.message : "the grant could not be finished";
  return page("Access not granted", `<h1>Access not granted</h1><p class="error">${escapeHtml(why)}</p>`, 400);
}

/** Who asked for a grant, as the confirmation page names them. */
function askedBy(asked: { owner: string; asker?: string }): string {
  if (asked.owner !== OPERATOR_OWNER) return `The corpus user <mark>${escapeHtml(asked.owner)}</mark>`;
  return asked.asker ? `The corpus operator <mark>${escapeHtml(asked.asker)}</mark>` : "The corpus operator";
}

export const GrantStarted = t.Object({
  authorize_url: t.String({ description: "open it in a browser: the provider asks the mailbox's owner to grant access" }),
  redirect_uri: t.String({ description: "where the provider sends the browser back (registered at the provider by the operator)" }),
  expires_at: t.String({ description: `the grant must be finished before then (${PENDING_TTL_MS / 60_000} minutes), once` }),
});

export const connectorGrantRoutes = (services: GuardServices & { connectors: ConnectorRegistry }) => {
  const { connectors } = services;
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
  return new Elysia({ name: "corpus/connector-grants" })
    .use(guard(services))
    .post(
      "/v1/connectors/:id/oauth",
      async ({ principal, params, request, info }) => {
        await assertNotRevoked(services.auth, principal, infoOf(request, info));
        const d = await connectors.own(principal.user, params.id);
        const config = d.config as Parameters<typeof signsInWithOAuth>[0];
        if (d.kind !== "imap" || !signsInWithOAuth(config))
          throw new DomainError("invalid", `connector ${d.id} does not sign in with OAuth: it is not an imap connector with config.oauth`);
        // The waiting grant keeps only the principal (not the request) to ask whether its token still stands.
        const stands = () => assertNotRevoked(services.auth, principal);
        const started = connectors.grants.begin(principal.user, d.id, grantBinding(config), stands);
        return { ...started, redirect_uri: connectors.grants.redirectUri };
      },
      {
        guard: { route: "POST /v1/connectors/:id/oauth" },
        parse: [...JSON_PARSE],
        params: t.Object({ id: t.String({ maxLength: 63 }) }),
        // A JSON body as on every POST (its content type is checked first); nothing in it yet.
        body: t.Object({}, { additionalProperties: false, description: "an empty object" }),
        response: { 200: GrantStarted, ...errors },
        detail: {
          tags: ["connectors"],
          summary: "Start granting an IMAP connector access to its mailbox with OAuth 2.0 (authorization code with PKCE)",
          security: [{ bearer: [] }],
        },
      },
    )
    .get(
      CALLBACK_PATH,
      async ({ request }) => {
        const params = new URL(request.url).searchParams;
        // A grant `corpus connector grant` started in a terminal waits there, not here: its code is pasted there.
        if (params.get("state")?.startsWith(TERMINAL_STATE_PREFIX))
          return page(
            "Back in the terminal",
            `<h1>Finish in the terminal</h1><p>This grant was started by <code>corpus connector grant</code>. Copy this page's address from the address bar and paste it where that command waits.</p><p class="muted">Nothing was kept here.</p>`,
          );
        try {
          // The provider's refusal (access_denied …) ends the grant at once.
          if (params.has("error")) await connectors.grants.finish(params);
          const asked = await connectors.grants.describe(params.get("state"));
          const code = params.get("code");
          if (!code) throw new GrantFlowError(`${asked.provider}'s answer has no code`);
          // Nothing is exchanged before the person here confirms, seeing who asked: a link to the
          // provider that someone else started would otherwise give them this mailbox.
          return page(
            "Grant access?",
            `<h1>Grant access to this mailbox?</h1><p>${askedBy(asked)} asked to read the mailbox <mark>${escapeHtml(asked.user)}</mark> with ${escapeHtml(asked.provider)}, for ${asked.owner === OPERATOR_OWNER ? "the operator's" : "their"} connector ${escapeHtml(asked.id)}.</p><p class="muted">Continue only if you started this from corpus yourself.</p><form method="post" action="${CALLBACK_PATH}">${hidden({ state: params.get("state") ?? "", code })}<button name="decision" value="grant">Grant access</button><button name="decision" value="cancel" class="secondary">Cancel</button></form>`,
          );
        } catch (error) {
          return notGranted(error);
        }
      },
      {
        detail: {
          tags: ["connectors"],
          summary: "Where the OAuth provider sends the browser back: a page that asks to confirm (not JSON)",
        },
      },
    )
    .post(
      CALLBACK_PATH,
      async ({ request }) => {
        try {
          // The confirmation is this server's own page: a post from another site is no one's confirmation.
          if (sentFromAnotherSite(request)) throw new GrantFlowError("this confirmation was sent from another site; nothing was kept");
          let fields: URLSearchParams;
          try {
            fields = await form(request);
          } catch {
            throw new GrantFlowError("the form could not be read");
          }
          if (fields.get("decision") !== "grant") {
            connectors.grants.cancel(fields.get("state"));
            throw new GrantFlowError("you cancelled; nothing was kept");
          }
          const done = await connectors.grants.finish(fields);
          const view = await connectors.granted(done.owner, done.id);
          const state = view.status === "error" ? `<p class="error">It does not answer yet: ${escapeHtml(view.reason ?? "")}</p>` : "";
          return page(
            "Access granted",
            `<h1>Access granted</h1><p>corpus now reads the mailbox of ${escapeHtml(done.user)} for ${done.owner === OPERATOR_OWNER ? "the operator's" : "the"} connector ${escapeHtml(done.id)}, with ${escapeHtml(done.provider)}.</p>${state}<p class="muted">You can close this page.</p>`,
          );
        } catch (error) {
          return notGranted(error);
        }
      },
      { parse: "none", detail: { tags: ["connectors"], summary: "The confirmation of a grant (a form: state, code, decision)" } },
    );
};
