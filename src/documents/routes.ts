// A cited document through REST and in a browser (D36): GET /v1/documents/{id} (scope
// corpus:read: auth/scopes.ts) in the fetch tool's shape, and the page /d/<id> under the public URL that a
// citation's url points at, with the cited passage highlighted. The page opens only for its
// owner: the OAuth session's person (its cookie) or a bearer token with that scope; without
// either it sends the browser to sign in and back. Everything in it is escaped (it is a user's
// mail), it is never cached, and it runs no script (the pages' CSP). Any id that is not the
// caller's own is "not found", on both.
import { Elysia, t } from "elysia";
import type { Archive } from "../archive/store";
import { type GuardServices, guard } from "../auth/guard";
import { REQUIRED_SCOPE } from "../auth/scopes";
import { AuthFailure } from "../auth/service";
import type { Config } from "../config";
import { HttpError } from "../http/errors";
import { ErrorBody } from "../http/model";
import { publicUrlOf } from "../http/public-url";
import { infoOf, requestContext } from "../http/request-context";
import { escapeHtml, messagePage, page } from "../oauth/pages";
import { cookies, OAUTH_PATHS, SESSION_COOKIE } from "../oauth/routes";
import { OAuthServer } from "../oauth/service";
import { OPENABLE_ID_MAX } from "./ids";
import {
  citedSpan,
  DOCUMENT_NOT_FOUND,
  DOCUMENT_PAGE_PATH,
  documentMetadata,
  documentView,
  type OpenedDocument,
  openDocument,
} from "./open";

export interface DocumentRouteServices extends GuardServices {
  archive: Archive;
  config: Config;
  oauth: { session(id: string | undefined): Promise<{ user: string } | undefined> };
}

const MetadataValue = t.Union([t.String(), t.Number(), t.Boolean(), t.Null()]);
export const DocumentBody = t.Object({
  id: t.String(),
  title: t.String(),
  text: t.String({ description: "the whole document, exactly as it was ranked" }),
  url: t.String({ description: "the document's page, /d/<id>" }),
  metadata: t.Record(t.String(), MetadataValue, {
    description: "source, connector, kind, type, path, date, document_sha256; for a chunk's id: cited_text, chunk_sha256, cited_at",
  }),
});

const ROUTE = "GET /v1/documents/:id";

/** The page's body: what the document is, the cited passage's hash, the text with the passage marked. */
function documentPage(opened: OpenedDocument): string {
  const d = opened.document;
  const m = documentMetadata(opened);
  const facts = [d.connector_label, d.path, d.kind, d.date ?? "no date"].map((x) => escapeHtml(String(x))).join(" · ");
  const parts = [`<h1>${escapeHtml(d.title || "(untitled)")}</h1>`, `<p class="muted">${facts}</p>`];
  parts.push(`<p class="muted">Source: ${escapeHtml(d.source_url)}</p>`);
  let body = escapeHtml(d.text);
  if (opened.cited) {
    parts.push(
      `<p class="muted">Cited passage, returned ${escapeHtml(opened.cited.cited_at)}; its sha256: <code>${escapeHtml(opened.cited.sha256)}</code></p>`,
    );
    const span = citedSpan(d.text, opened.cited.text);
    if (span)
      body = `${escapeHtml(d.text.slice(0, span.start))}<mark id="cited">${escapeHtml(d.text.slice(span.start, span.end))}</mark>${escapeHtml(d.text.slice(span.end))}`;
    else parts.push(`<blockquote><mark id="cited">${escapeHtml(opened.cited.text)}</mark></blockquote>`);
  }
  parts.push(`<pre>${body}</pre>`, `<p class="muted">Document sha256: <code>${escapeHtml(String(m.document_sha256))}</code></p>`);
  return parts.join("");
}

export const documentRoutes = (s: DocumentRouteServices) => {
  const builtInSignIn = OAuthServer.builtIn(s.config);

  /** The page's reader: a bearer token's user (with the route's scope), or the signed-in person's; undefined when neither. */
  async function reader(request: Request): Promise<string | undefined> {
    const authorization = request.headers.get("authorization");
    if (authorization !== null) {
      const p = s.auth.confine(await s.auth.authenticate(authorization, REQUIRED_SCOPE[ROUTE]), ROUTE);
      return p.user;
    }
    return (await s.oauth.session(cookies(request).get(SESSION_COOKIE)))?.user;
  }

  return new Elysia({ name: "corpus/documents" })
    .use(requestContext)
    .use(guard(s))
    .get(
      "/v1/documents/:id",
      async ({ params, principal, request, info }) => {
        const opened = await openDocument(s.archive, principal.user, params.id);
        if (!opened) throw new HttpError(404, `${DOCUMENT_NOT_FOUND}: no document ${params.id} among those returned to you`);
        return documentView(opened, publicUrlOf(s.config, request, infoOf(request, info)));
      },
      {
        guard: { route: ROUTE },
        params: t.Object({ id: t.String({ maxLength: OPENABLE_ID_MAX }) }),
        response: { 200: DocumentBody, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: {
          tags: ["documents"],
          summary:
            "A document or cited chunk a search returned to you, whole, exactly as it was ranked (id from search, fetch or /v1/query)",
          security: [{ bearer: [] }],
        },
      },
    )
    .get(
      `${DOCUMENT_PAGE_PATH}/:id`,
      async ({ params, request }) => {
        let user: string | undefined;
        try {
          user = await reader(request);
        } catch (error) {
          if (!(error instanceof AuthFailure)) throw error;
          return page("Cannot open", messagePage("Cannot open this document", error.message), error.status, [
            ["www-authenticate", error.challenge],
          ]);
        }
        if (!user) {
          const back = `${DOCUMENT_PAGE_PATH}/${params.id}`;
          if (builtInSignIn)
            return new Response(null, {
              status: 303,
              headers: { location: `${OAUTH_PATHS.login}?return=${encodeURIComponent(back)}`, "cache-control": "no-store" },
            });
          return page(
            "Sign in",
            messagePage("Sign in first", `Open this page with a bearer token that has the scope ${REQUIRED_SCOPE[ROUTE]}.`),
            401,
          );
        }
        // Outside the guard: the reader's data key made present here (D33), as the guard does.
        await s.userKeys.ready(user, { create: true });
        const opened = await openDocument(s.archive, user, params.id);
        if (!opened) return page("Not found", messagePage(DOCUMENT_NOT_FOUND, "No document of yours has this id."), 404);
        return page(opened.document.title || "Document", documentPage(opened));
      },
      {
        params: t.Object({ id: t.String({ maxLength: 200 }) }),
        detail: {
          tags: ["documents"],
          summary:
            "A cited document's page (a citation's url), the cited passage highlighted; only for its owner, signed in (OAuth session) or with a bearer token",
          responses: {
            200: { description: "an HTML page" },
            303: { description: "to sign in, then back" },
            401: { description: "no session and no token" },
            404: { description: "not a document of yours" },
          },
        } as never,
      },
    );
};
