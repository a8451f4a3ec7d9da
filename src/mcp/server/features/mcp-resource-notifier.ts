import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { MCP_SESSION_NOTIFIER, type McpSessionNotifier } from '../../interfaces/mcp-session-notifier.interface';
import { McpMethod } from '../../protocol/mcp-methods';
import { McpListenStreams } from '../stateless/listen-stream-registry';
import type { McpSubscriptionStore } from '../../persistence/interfaces/mcp-subscription-store.interface';
import { InjectMcpSubscriptionStore } from '../../persistence/mcp-persistence.constants';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { ResourcesFeature } from './resources.feature';

/**
 * The principal a session is bound to, as far as the switches read it: they match on the key
 * alone (the anonymous principal too), which is all a session row keeps.
 */
function sessionPrincipal(key: string): McpPrincipal {
  return { key, label: key, raw: null };
}

/**
 * Announces that a resource changed: every live session of the mount that subscribed to the URI
 * (on any replica) gets `notifications/resources/updated` through the mount's session notifier,
 * and so does every 2026-07-28 `subscriptions/listen` stream whose filter names the URI. A
 * resource that no longer exists, or that `McpRegistry` switched off for a session's principal
 * (or for everyone) since it subscribed, is not announced to that session; its subscription
 * stays, so updates resume once the resource is switched on again.
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

  /** @internal Built by the mount's module. */
  constructor(
    @InjectMcpSubscriptionStore() private readonly subscriptions: McpSubscriptionStore,
    private readonly resources: ResourcesFeature,
    @Optional() @Inject(MCP_SESSION_NOTIFIER) private readonly notifier?: McpSessionNotifier | null,
    @Optional() @Inject(McpListenStreams) private readonly listenStreams?: McpListenStreams | null,
  ) {}

  /**
   * Notifies the subscribers of `uri` that may still see it. Resolves with the session ids the
   * notification was handed to (none when the mount has no session notifier), once it was also
   * handed to the listen streams of every replica; rejects when handing it over failed for a
   * session or for the listen streams (after trying every other one).
   */
  async resourceUpdated(uri: string): Promise<string[]> {
    const notification = { jsonrpc: '2.0' as const, method: McpMethod.ResourcesUpdated, params: { uri } };
    const listened = this.listenStreams ? this.listenStreams.publish(notification) : Promise.resolve();
    const notifier = this.notifier;
    if (!notifier) {
      if (!this.warned)
        this.logger.warn('No session notifier is configured: resource update notifications reach no session.');
      this.warned = true;
      await listened;
      return [];
    }
    const sessionIds = await this.announcedSessions(uri).catch(async (error) => {
      await listened.catch(() => undefined);
      throw error;
    });
    const outcomes = await Promise.allSettled([
      listened,
      ...sessionIds.map((sessionId) => notifier.notifySession(sessionId, notification)),
    ]);
    const failure = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failure) throw failure.reason;
    return sessionIds;
  }

  /**
   * The live subscribers of `uri` whose principal may still see the resource. Decided here,
   * before the notification is numbered in any session's event log, so a stream resumed with
   * `Last-Event-ID` cannot replay a hidden update either. It costs no query beyond the subscriber
   * lookup: the principal keys come with it, and the switches are the ones this replica holds in
   * memory (kept current by the registry's channel).
   */
  private async announcedSessions(uri: string): Promise<string[]> {
    const mayAnnounce = this.resources.updateGateFor(uri);
    if (!mayAnnounce) return [];
    const subscribers = await this.subscriptions.subscriberSessions(uri);
    return subscribers
      .filter((subscriber) => mayAnnounce(sessionPrincipal(subscriber.principalKey)))
      .map((subscriber) => subscriber.sessionId);
  }

  /** The live sessions currently subscribed to `uri` (whether or not an update would be announced to them). */
  subscribers(uri: string): Promise<string[]> {
    return this.subscriptions.subscribers(uri);
  }
}
