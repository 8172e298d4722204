// What an operator does to accounts (D27, D35), once for both of the operator's ways in: the
// CLI (`corpus user …`, accounts/cli.ts) and the console (console/routes.ts). Each answers the
// sentence the operator is told; AccountError says why a change was refused.
import type { AuthService } from "../auth/service";
import { ConsoleSessions } from "../console/store";
import type { OAuthServer } from "../oauth/service";
import { AccountError, type Accounts } from "./store";

export interface AccountRooms {
  accounts: Accounts;
  oauth: OAuthServer;
  auth: AuthService;
  db: ConstructorParameters<typeof ConsoleSessions>[0];
}

export async function addAccount(rooms: AccountRooms, id: string, password: string, operator: boolean): Promise<string> {
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

export async function removeAccount(rooms: AccountRooms, id: string): Promise<string> {
  if (!rooms.accounts.remove(id)) throw new AccountError(`no user ${id}`);
  await rooms.oauth.forgetUser(id);
  await rooms.auth.store.revokeUser(id);
  new ConsoleSessions(rooms.db).forgetUser(id);
  return `removed user ${id} and revoked their tokens (their indexed data stays until DELETE /v1/delete_my_data)`;
}

/** Every token of `id` issued until now, and their connected apps and sign-in sessions; the account stays. */
export async function revokeAccess(rooms: AccountRooms, id: string): Promise<string> {
  if (!rooms.accounts.exists(id)) throw new AccountError(`no user ${id}`);
  const tokens = await rooms.auth.store.revokeUser(id);
  await rooms.oauth.forgetUser(id);
  return `revoked every token of ${id} issued until now (${tokens} still unexpired) and signed out their connected apps`;
}
