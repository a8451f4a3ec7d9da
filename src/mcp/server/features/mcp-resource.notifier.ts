import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { MCP_SESSION_NOTIFIER, type McpSessionNotifier } from '../../interfaces/mcp-session-notifier.interface';
import { ResourceSubscriptionStore } from './resource-subscription.store';

/**
 * Announces that a resource changed: every live session of the mount that subscribed to the URI
 * (on any replica) gets `notifications/resources/updated` through the mount's session notifier.
 *
 * @example
 * ```ts
 * constructor(private readonly resources: McpResourceNotifier) {}
 * async save(config: Config) { await this.repo.save(config); await this.resources.resourceUpdated('config://app'); }
 * ```
 */
@Injectable()
export class McpResourceNotifier {
  private readonly logger = new Logger(McpResourceNotifier.name);
  private warned = false;

  constructor(
    private readonly subscriptions: ResourceSubscriptionStore,
    @Optional() @Inject(MCP_SESSION_NOTIFIER) private readonly notifier?: McpSessionNotifier | null,
  ) {}

  /**
   * Notifies the subscribers of `uri`. Resolves with the session ids the notification was handed
   * to (none when the mount has no session notifier); rejects when handing it over failed for
   * a session (after trying every other one).
   */
  async resourceUpdated(uri: string): Promise<string[]> {
    const notifier = this.notifier;
    if (!notifier) {
      if (!this.warned) this.logger.warn('No session notifier is configured: resource update notifications are not delivered.');
      this.warned = true;
      return [];
    }
    const sessionIds = await this.subscriptions.subscribers(uri);
    const notification = { jsonrpc: '2.0' as const, method: 'notifications/resources/updated', params: { uri } };
    const outcomes = await Promise.allSettled(sessionIds.map((sessionId) => notifier.notifySession(sessionId, notification)));
    const failure = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failure) throw failure.reason;
    return sessionIds;
  }

  /** The live sessions currently subscribed to `uri`. */
  subscribers(uri: string): Promise<string[]> {
    return this.subscriptions.subscribers(uri);
  }
}
