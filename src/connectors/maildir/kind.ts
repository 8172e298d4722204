// `maildir` (D18): a folder of mail (Maildir, .eml files, mbox), indexed locally.
import { folderKind } from "../folder-kind";
import { maildirSource } from "./connector";

export const maildirKind = folderKind("maildir", {
  title: "Mail folder (Maildir, .eml, mbox)",
  datesAreFileTimes: false,
  placeholder: "/srv/corpus/mail",
  source: maildirSource,
});
