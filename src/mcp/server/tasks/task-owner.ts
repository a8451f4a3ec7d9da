import type { McpTaskRecord } from '../../persistence/interfaces/mcp-task-store.interface';
import { storedPrincipalKey } from '../../persistence/new-records';
import { MCP_ANONYMOUS_KEY } from '../pipeline/anonymous-principal';

/**
 * Who may see, read, cancel and answer a task. Tasks belong to the principal key; but every
 * caller without a token on an `anonymous: true` mount is the same principal, so an anonymous
 * task is bound further, to something only its creator holds: the 2025-11-25 session that
 * created it (whose id is the anonymous session's only secret), or, without a session
 * (2026-07-28), the task id itself, 192 random bits that only the creator was told and that no
 * list ever shows another caller.
 */
export interface TaskOwner {
  /** The principal key as stored on the task's row. */
  principalKey: string;
  /** True for the anonymous principal: the task is bound to `sessionId` too. */
  anonymous: boolean;
  /** The caller's 2025 session, or null (2026-07-28, where the task id is the binding). */
  sessionId: string | null;
}

/** The owner a request with this principal key and session speaks for. */
export function taskOwnerOf(principalKey: string, sessionId: string | null | undefined): TaskOwner {
  return {
    principalKey: storedPrincipalKey(principalKey),
    anonymous: principalKey === MCP_ANONYMOUS_KEY,
    sessionId: sessionId ?? null,
  };
}

/**
 * True when `owner` may act on the task: same principal and, for an anonymous caller, same
 * session (both null: a sessionless anonymous task is reached by its id alone, and never from
 * a session, nor a session's task without that session).
 */
export function ownsTask(owner: TaskOwner, record: Pick<McpTaskRecord, 'principalKey' | 'sessionId'>): boolean {
  if (record.principalKey !== owner.principalKey) return false;
  return !owner.anonymous || record.sessionId === owner.sessionId;
}

/**
 * The session `tasks/list` lists for an owner: `undefined` lists every task of the principal;
 * an anonymous caller lists its session's tasks only, and nothing without a session (null).
 */
export function listedSessionOf(owner: TaskOwner): string | null | undefined {
  return owner.anonymous ? owner.sessionId : undefined;
}
