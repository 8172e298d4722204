// The kinds that read a local folder into corpus's own index (maildir, files): one config, a
// path under the user's roots (D23), one form field.
import { Type } from "@sinclair/typebox";
import { type FolderSource, IndexedFolderConnector } from "./indexed-source";
import { type ConnectorKindRecord, defineKind, type KindContext } from "./kind";
import type { Confine } from "./paths";

export const FolderConfig = Type.Object(
  { path: Type.String({ minLength: 1, maxLength: 4096, description: "absolute folder path" }) },
  { additionalProperties: false },
);

/** A folder kind: `source` reads the folder's files as records. */
export function folderKind(
  name: string,
  kind: { title: string; datesAreFileTimes: boolean; placeholder: string; source(path: string, check: Confine): FolderSource },
): ConnectorKindRecord {
  return defineKind({
    title: kind.title,
    schema: FolderConfig,
    indexedLocally: true,
    datesAreFileTimes: kind.datesAreFileTimes,
    create: ({ path }, context: KindContext) =>
      new IndexedFolderConnector(name, path, context.index(), kind.source(path, context.check), context.indexed),
    localPath: () => "path",
    form: [{ name: "path", label: "Folder", input: "text", placeholder: kind.placeholder }],
  });
}
