import type { McpInboundSessionRecord } from './interfaces/mcp-session-store.interface';

/*
 * The one idle-session rule of the package. Stores that filter in code call `isSessionLive`;
 * stores that filter in SQL compare `last_seen_at >= sessionIdleCutoff(...)`, which is the same
 * rule: a session is idle once it was last seen strictly before the cutoff.
 */

/** The oldest `lastSeenAt` a live session may have at `now`. */
export function sessionIdleCutoff(idleTtlMs: number, now: number = Date.now()): Date {
  return new Date(now - idleTtlMs);
}

/** Whether a session last seen at `lastSeenAt` has been idle for longer than `idleTtlMs` at `now`. */
export function isSessionIdle(lastSeenAt: Date, idleTtlMs: number, now: number = Date.now()): boolean {
  return lastSeenAt.getTime() < sessionIdleCutoff(idleTtlMs, now).getTime();
}

/** Whether a session can still be used at `now`: not terminated and not idle. */
export function isSessionLive(
  session: Pick<McpInboundSessionRecord, 'lastSeenAt' | 'terminatedAt'>,
  idleTtlMs: number,
  now: number = Date.now(),
): boolean {
  return !session.terminatedAt && !isSessionIdle(session.lastSeenAt, idleTtlMs, now);
}

/** The longest a session's `lastSeenAt` may lag behind its last use: one second. */
const MAX_TOUCH_INTERVAL_MS = 1000;

/**
 * How often `lastSeenAt` is refreshed per session, at most: a twentieth of the idle TTL, capped
 * at one second. A session's recorded `lastSeenAt` lags its last use by less than two intervals
 * (one on the replica that used it, one for a refresh another replica made just before), so the
 * interval must stay far below the idle TTL for a session in use never to look idle.
 */
export function sessionTouchIntervalMs(idleTtlMs: number): number {
  return Math.max(1, Math.min(MAX_TOUCH_INTERVAL_MS, Math.floor(idleTtlMs / 20)));
}
