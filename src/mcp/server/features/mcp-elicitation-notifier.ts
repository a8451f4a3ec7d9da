import { Inject, Injectable, Optional } from '@nestjs/common';
import { MCP_SESSION_NOTIFIER, type McpSessionNotifier } from '../../interfaces/mcp-session-notifier.interface';
import { McpMethod } from '../../protocol/mcp-methods';

/**
 * Tells a client that the out-of-band interaction of a URL elicitation is over
 * (`notifications/elicitation/complete`, 2025-11-25). The page the user opened usually answers
 * on another HTTP request, maybe on another replica: the notification goes through the mount's
 * session bus to whichever replica holds the session's GET stream, and is kept in the session's
 * event log for a client that reconnects.
 *
 * @example
 * ```ts
 * // In the tool: remember who asked.
 * const { elicitationId } = await ctx.elicit({ mode: 'url', url, message: 'Connect your calendar' });
 * await this.pending.save(elicitationId, { sessionId: ctx.sessionId, principal: ctx.principal.key });
 * // In the OAuth callback route, once the tokens are stored:
 * const { sessionId } = await this.pending.take(elicitationId);
 * await this.elicitations.complete(sessionId, elicitationId);
 * ```
 */
@Injectable()
export class McpElicitationNotifier {
  /** @internal Built by the mount's module. */
  constructor(@Optional() @Inject(MCP_SESSION_NOTIFIER) private readonly notifier?: McpSessionNotifier | null) {}

  /**
   * Sends `notifications/elicitation/complete` for `elicitationId` to the session that asked
   * for it. Resolves true once the notification was handed to the session's stream; false
   * without a session (`ctx.sessionId` is null on the stateless revision, which has no such
   * notification: its client learns the outcome by retrying) or without a session notifier.
   * Send it only to the session whose tool created the elicitation: the spec allows no other.
   */
  async complete(sessionId: string | null, elicitationId: string): Promise<boolean> {
    if (typeof elicitationId !== 'string' || elicitationId === '')
      throw new TypeError('complete() needs the elicitationId the tool sent');
    if (sessionId === null || !this.notifier) return false;
    await this.notifier.notifySession(sessionId, {
      jsonrpc: '2.0',
      method: McpMethod.ElicitationComplete,
      params: { elicitationId },
    });
    return true;
  }
}
