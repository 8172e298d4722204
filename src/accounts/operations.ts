// What an operator does to accounts (D27, D35), once for both of the operator's ways in: the
// CLI (`corpus user …`, accounts/cli.ts) and the console (console/routes.ts). Each answers the
// sentence the operator is told; AccountError says why a change was refused.
import type { AuthService } from "../auth/service";
import { ConsoleSessions } from "../console/store";
import type { OAuthServer } from "../oauth/service";
import { type DeletionServices, dataOf, deleteUser } from "../users/deletion";
import { AccountError, type Accounts } from "./store";

export interface AccountRooms {
  accounts: Accounts;
  oauth: OAuthServer;
  auth: AuthService;
  db: ConstructorParameters<typeof ConsoleSessions>[0];
}

/** The rows of each room of a user's data, as the operator is told them ("2 connectors, 5 archive rows"). */
const described = (kept: Array<{ room: string; rows: number }>) => kept.map((k) => `${k.room} ${k.rows}`).join(", ");

/**
 * Adds an account. A name under which data is still kept (a user removed before removals deleted
 * their data, or one who came only with `corpus token create`) is refused: the new person would
 * open the earlier one's connectors and archive.
 */
export async function addAccount(rooms: AccountRooms & DeletionServices, id: string, password: string, operator: boolean): Promise<string> {
  const kept = (await rooms.accounts.exists(id)) ? [] : await dataOf(rooms, id);
  if (kept.length)
    throw new AccountError(
      `data of an earlier user ${id} is still kept (rows: ${described(kept)}); a new account of that name would open it. ` +
        `Delete it first (corpus user remove --user ${id} --delete-data), or choose another name`,
    );
  await rooms.accounts.add(id, password, { operator });
  return operator ? `added operator ${id}` : `added user ${id}`;
}

export async function changePassword(rooms: AccountRooms, id: string, password: string): Promise<string> {
  await rooms.accounts.setPassword(id, password);
  // A new password ends the sessions and grants held under the old one.
  await rooms.oauth.forgetUser(id);
  new ConsoleSessions(rooms.db).forgetUser(id);
  return `changed the password of ${id}; their sessions and connected apps were signed out`;
}

/**
 * Removes an account and everything of the person's (users/deletion.ts: the path of DELETE
 * /v1/delete_my_data), so that no one added later under the name opens it. Refused, with nothing
 * changed, while their data is kept and `deleteData` was not asked: the message says what stays.
 */
export async function removeAccount(rooms: AccountRooms & DeletionServices, id: string, deleteData: boolean): Promise<string> {
  const account = await rooms.accounts.exists(id);
  const kept = await dataOf(rooms, id);
  if (!account && !(deleteData && kept.length)) throw new AccountError(`no user ${id}`);
  if (kept.length && !deleteData)
    throw new AccountError(
      `user ${id} still has data (rows: ${described(kept)}); nothing was removed. ` +
        "Removing the account deletes it for good, as DELETE /v1/delete_my_data does: ask for it with --delete-data",
    );
  if (account) await rooms.accounts.remove(id);
  await rooms.oauth.forgetUser(id);
  new ConsoleSessions(rooms.db).forgetUser(id);
  // Revokes their tokens, erases every room's rows and destroys their data key, in one transaction.
  const deleted = await deleteUser(rooms, id);
  const what = kept.length ? `deleted their data (rows: ${described(kept)})` : "they had no data";
  return `${account ? `removed user ${id}` : `no account ${id}`}, revoked their tokens (${deleted.details.oauth_tokens_revoked} unexpired); ${what}`;
}

/** Every token of `id` issued until now, and their connected apps and sign-in sessions; the account stays. */
export async function revokeAccess(rooms: AccountRooms, id: string): Promise<string> {
  if (!(await rooms.accounts.exists(id))) throw new AccountError(`no user ${id}`);
  const tokens = await rooms.auth.store.revokeUser(id);
  await rooms.oauth.forgetUser(id);
  return `revoked every token of ${id} issued until now (${tokens} still unexpired) and signed out their connected apps`;
}
