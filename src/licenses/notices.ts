// The notices of everything the executable bundles (D35): gathered by the build from the bundle's
// own inputs (scripts/notices/gather.ts) and compiled in as the module below; `corpus licenses`
// prints them, and the build writes the same text beside the executable for releases.
import { SERVICE_NAME, SERVICE_VERSION } from "../version";

/** One licence or notice text and where it was found ("LICENSE", or what was used when nothing shipped). */
export interface NoticeText {
  file: string;
  text: string;
}

/** A bundled package, runtime or data set. */
export interface Notice {
  name: string;
  version: string;
  /** An SPDX licence expression (as its package.json says, unless `note` says otherwise). */
  license: string;
  /** "npm": a package of the lockfile; "runtime": Bun and what it carries; "model": the embedding model. */
  kind: "npm" | "runtime" | "model";
  /** Where it comes from: its package folder or its upstream address. */
  source: string;
  texts: NoticeText[];
  /** What a reader should know: a licence text that did not ship and was taken from the standard one, native files carried. */
  note?: string;
}

/** The module the build provides (scripts/build.ts); under `bun run` it does not exist. */
export const NOTICES_MODULE = "corpus:third-party-notices";

/** The file name of the text written beside the executable. */
export const NOTICES_FILE = "THIRD-PARTY-NOTICES.txt";

/** The notices compiled into this executable, or undefined when running from source. */
export async function bundledNotices(): Promise<Notice[] | undefined> {
  try {
    // The literal is NOTICES_MODULE: the bundler resolves only a literal.
    const module = (await import("corpus:third-party-notices")) as { default: Notice[] };
    return module.default;
  } catch {
    return undefined;
  }
}

const RULE = "=".repeat(78);

/** The notices as one text: a heading, then each entry with its licence texts. */
export function renderNotices(notices: readonly Notice[]): string {
  const head = `${SERVICE_NAME} ${SERVICE_VERSION} bundles the software and data below. Each entry gives its version, its licence
(an SPDX expression) and the licence and notice texts that ship with it.
`;
  const entries = notices.map((n) =>
    [
      RULE,
      `${n.name} ${n.version}`,
      `Licence: ${n.license}`,
      `Source: ${n.source}`,
      ...(n.note ? [`Note: ${n.note}`] : []),
      ...n.texts.flatMap((t) => ["", `--- ${t.file} ---`, t.text.trimEnd()]),
    ].join("\n"),
  );
  return `${[head, ...entries].join("\n\n")}\n`;
}

/** The list `corpus licenses --json` prints: each entry without its texts, which the text form holds. */
export function listNotices(notices: readonly Notice[]) {
  return notices.map(({ name, version, license, kind, source, texts, note }) => ({
    name,
    version,
    license,
    kind,
    source,
    license_files: texts.map((t) => t.file),
    ...(note ? { note } : {}),
  }));
}

/** What `corpus licenses` prints: the notices' text, or (json) their list. */
export async function licensesOutput(json: boolean): Promise<string> {
  const notices = await bundledNotices();
  if (!notices)
    throw new Error(
      `the notices are compiled into the executable by its build (npm run build writes dist/corpus and dist/${NOTICES_FILE})`,
    );
  return json ? JSON.stringify(listNotices(notices), null, 2) : renderNotices(notices).trimEnd();
}
