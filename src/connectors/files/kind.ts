// `files` (D18): a folder of documents, indexed locally. A file's date is when it was last
// changed, not what it is about: a question's dates do not narrow it (they may boost it).
import { folderKind } from "../folder-kind";
import { filesSource } from "./connector";

export const filesKind = folderKind("files", {
  title: "Document folder",
  datesAreFileTimes: true,
  placeholder: "/srv/corpus/docs",
  source: filesSource,
});
