// Attack on the archive's pending vectors (src/archive/store.ts embedPending) and a user's
// deletion (D13, D25: "nothing of theirs is written after"). The embedding service's generation
// keeps a deleted owner's job out of the *cache*, but still hands its vectors back to the caller;
// embedPending then stores them in archive_vec under the user's key *of that moment* (a user
// who came back has a new one), into whatever archive_chunks row now holds the id (ids are
// reused: INTEGER PRIMARY KEY without AUTOINCREMENT), with no check of whose row it is.
import { expect, setDefaultTimeout, test } from "bun:test";
import { bearer, req, tokenFor } from "../helpers";
import { type App, appPerTest } from "../support/app-per-test";
import { archivedChunk } from "../support/archived-chunk";

setDefaultTimeout(120_000);

const newApp = appPerTest();
let t: App | undefined;

test("attack: a deleted user's archived chunk, embedding when they were deleted, is stored after, into another user's reused row", async () => {
  t = await newApp();
  const { services } = t;
  const token = await tokenFor(services, "alice", ["corpus:search", "connectors:write", "connectors:read"]);
  services.userKeys.keyFor("alice");
  services.userKeys.keyFor("bob");
  // Alice's answer archived; its chunk's vector is computed in the background (the model is loading).
  services.archive.store(
    "alice",
    "qry_alice",
    "where is the lighthouse",
    [archivedChunk("c1", "Lighthouse", "the keeper retires in spring")],
    [undefined],
  );
  expect(services.embeddings.pending).toBe(1);

  // Alice deletes her data (her job is already under way), and comes back: her next write makes her a new key.
  const deleted = await t.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(token) }));
  expect(deleted.status).toBe(200);
  services.userKeys.keyFor("alice");
  // Bob's answer is archived next: its chunk takes the id alice's had (the table is empty again).
  const bobText = archivedChunk("c1", "Harbour audit", "the pallets arrived on day four");
  services.archive.store("bob", "qry_bob", "when did the pallets arrive", [bobText], [undefined]);
  await services.archive.settled();
  await services.embeddings.idle();

  const vectorsOf = (user: string) =>
    services.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM archive_vec WHERE user_id = ?").get(user)!.n;
  const [bobVector] = await services.embeddings.embed("bob", [bobText.embedText]);
  const bobFinds = (await services.archive.search("bob", bobVector!, { limit: 5 })).map((m) => m.query_id);
  // Was { aliceVectors: 1, bobVectors: 0, bobFinds: [] }: the deleted alice's vector written
  // after her deletion (under her new key, id of bob's chunk), bob's chunk marked embedded
  // without a vector of its own, so his archive never finds it.
  expect({ aliceVectors: vectorsOf("alice"), bobVectors: vectorsOf("bob"), bobFinds }).toEqual({
    aliceVectors: 0,
    bobVectors: 1,
    bobFinds: ["qry_bob"],
  });
});
