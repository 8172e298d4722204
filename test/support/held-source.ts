// A live source (SQL, IMAP: no index of its own) whose search the test holds: asked, it waits
// until the test lets it answer, so that something (a deletion) can happen meanwhile.
import type { ActiveConnector } from "../../src/connectors/registry";
import type { Connector, SourceRecord } from "../../src/connectors/types";
import type { App } from "./app-per-test";

export interface HeldSource {
  connector: Connector;
  /** Resolves once the first search was asked. */
  asked: Promise<void>;
  /** Lets the held search answer. */
  release(): void;
}

/** A source answering `records` once released; with `once`, only its first search does (later ones find nothing). */
export function heldSource(records: SourceRecord[], { once = false } = {}): HeldSource {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let signal!: () => void;
  const asked = new Promise<void>((r) => (signal = r));
  let searches = 0;
  const connector: Connector = {
    kind: "sql",
    health: async () => ({ status: "ok" }),
    async search() {
      if (once && searches++ > 0) return [];
      signal();
      await gate;
      return records;
    },
    close: async () => {},
  };
  return { connector, asked, release };
}

/** Every question `t` answers also asks `source` as connector `id` of `owner` (beside the user's own). */
export function askedToo(t: App, id: string, label: string, owner: ActiveConnector["owner"], source: Connector): void {
  const active = t.services.connectors.active.bind(t.services.connectors);
  t.services.connectors.active = async (user: string, ids?: string[]): Promise<ActiveConnector[]> => [
    ...(await active(user, ids)),
    { id, kind: "sql", label, owner, datesAreFileTimes: false, connector: source },
  ];
}
