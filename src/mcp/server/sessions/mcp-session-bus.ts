import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { McpSessionNotifier } from '../../interfaces/mcp-session-notifier.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../config/mcp.options';
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcResponse } from '../../protocol/jsonrpc';
import type { McpInboundSessionRecord } from '../../persistence/interfaces/mcp-session-store.interface';
import { McpMethod } from '../../protocol/mcp-methods';
import { McpPendingClientRequests } from './mcp-session-channel-pending';
import { McpStreamRegistry } from './mcp-stream-registry';
import { Toolset } from '../dispatch/toolset';
import { MCP_EVENT_LOG, MCP_PUBSUB, type McpPubSub } from '../pubsub/mcp-pubsub.providers';
import type { McpEventLog } from '../pubsub/mcp-event-log.interface';
import { McpMountBus, type McpSessionBusMessage } from '../pubsub/mount-bus';
import { SESSION_STREAM_ID } from './mcp-stream-registry';

/**
 * Told when another replica ended a session (`principalKey`: only if the session is bound to that
 * principal) or changed its record: copies of the session held in memory are out of date.
 */
export type McpSessionChangeListener = (sessionId: string, principalKey?: string) => void;

/**
 * Carries what must reach the replica holding a call or a stream of a session: the client's
 * answers to server->client requests, cancellations, session notifications (GET stream) and
 * session ends. Whatever can be handled here is; the rest is published on the mount's channel,
 * where the replica that holds the call or the stream picks it up. Implements the mount's
 * `McpSessionNotifier`.
 */
@Injectable()
export class McpSessionBus implements McpSessionNotifier, OnModuleInit, BeforeApplicationShutdown {
  private readonly logger: Logger;
  private readonly origin = randomBytes(9).toString('base64url');
  private unsubscribe?: () => Promise<void>;
  private readonly changeListeners = new Set<McpSessionChangeListener>();

  constructor(
    @Inject(MCP_MODULE_OPTIONS) options: McpResolvedOptions,
    @Inject(MCP_PUBSUB) private readonly pubsub: McpPubSub,
    private readonly pending: McpPendingClientRequests,
    private readonly streams: McpStreamRegistry,
    private readonly toolset: Toolset,
    @Inject(MCP_EVENT_LOG) private readonly log: McpEventLog,
    private readonly mountBus: McpMountBus,
  ) {
    this.logger = new Logger(`McpSessionBus:${options.mount}`);
  }

  /** @inheritdoc */
  async onModuleInit(): Promise<void> {
    this.unsubscribe = await this.mountBus.subscribe('session-bus', (message) => this.receive(message));
  }

  /** @inheritdoc */
  async beforeApplicationShutdown(): Promise<void> {
    await this.unsubscribe?.();
    await this.pubsub.close();
  }

  /**
   * Passes on what a client sent on its session that concerns calls in progress, on any
   * transport: an answer goes to the server->client request waiting for it, a
   * `notifications/cancelled` to every replica. Anything else needs nothing more.
   */
  async forward(
    kind: 'request' | 'notification' | 'response',
    message: JsonRpcMessage,
    session: Pick<McpInboundSessionRecord, 'sessionId' | 'protocolVersion'>,
  ): Promise<void> {
    if (kind === 'response') await this.answer(session.sessionId, message as JsonRpcResponse);
    else if (kind === 'notification' && (message as JsonRpcNotification).method === McpMethod.Cancelled)
      await this.cancel(session.sessionId, message as JsonRpcNotification, session.protocolVersion);
  }

  /** Routes a client's answer to the server->client request waiting for it, wherever it waits. */
  async answer(sessionId: string, response: JsonRpcResponse): Promise<void> {
    if (!this.pending.settle(sessionId, response))
      await this.publish({ t: 'answer', o: this.origin, s: sessionId, m: response });
  }

  /** Spreads a `notifications/cancelled` (already handled on this replica) to the others. */
  async cancel(sessionId: string, notification: JsonRpcNotification, protocolVersion: string): Promise<void> {
    this.cancelWaits(sessionId, notification);
    await this.publish({ t: 'cancel', o: this.origin, s: sessionId, m: notification, v: protocolVersion });
  }

  /**
   * @inheritdoc
   * The notification is numbered in the session's event log first, so a client whose stream is
   * down right now gets it when it reconnects with `Last-Event-ID`.
   */
  async notifySession(sessionId: string, notification: JsonRpcNotification): Promise<void> {
    const json = JSON.stringify(notification);
    const seq = await this.log.append(sessionId, SESSION_STREAM_ID, json);
    if (!this.streams.deliver(sessionId, seq, json))
      await this.publish({ t: 'notify', o: this.origin, s: sessionId, m: notification, q: seq });
  }

  /**
   * Sends a notification meant for every session (a list changed) to the GET streams open on
   * this process, each numbered in its session's event log like any session notification.
   * Sessions whose stream is held by another replica get it from that replica, which is told by
   * its own listener (`McpRegistry`'s channel), not by this call.
   */
  async notifyStreamsHere(notification: JsonRpcNotification): Promise<void> {
    const json = JSON.stringify(notification);
    const outcomes = await Promise.allSettled(
      this.streams
        .sessionIds()
        .map(async (sessionId) =>
          this.streams.deliver(sessionId, await this.log.append(sessionId, SESSION_STREAM_ID, json), json),
        ),
    );
    const failure = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failure) throw failure.reason;
  }

  /**
   * Ends the session's GET stream and its requests in progress, wherever they are (the session
   * was terminated, or found idle: then only what `principalKey` holds).
   */
  async endSession(sessionId: string, principalKey?: string): Promise<void> {
    this.streams.end(sessionId, principalKey);
    await this.publish(
      principalKey === undefined
        ? { t: 'end', o: this.origin, s: sessionId }
        : { t: 'end', o: this.origin, s: sessionId, p: principalKey },
    );
  }

  /**
   * Tells the other replicas that the session's record changed (its log level): they drop what
   * they hold of it in memory and read it again from the store.
   */
  async sessionChanged(sessionId: string): Promise<void> {
    await this.publish({ t: 'stale', o: this.origin, s: sessionId });
  }

  /**
   * False while messages from the other replicas cannot arrive (the Redis subscription is down):
   * what this replica holds in memory about sessions cannot be trusted meanwhile.
   */
  get listening(): boolean {
    return this.pubsub.listening ?? true;
  }

  /**
   * Calls `listener` each time the bus is back after a drop: messages sent meanwhile (session
   * ends among them) were lost. Returns the unsubscribe.
   */
  onMessagesLost(listener: () => void): () => void {
    return this.pubsub.onReconnect?.(listener) ?? (() => undefined);
  }

  /** Calls `listener` for every session another replica ends or changes; returns the unsubscribe. */
  onSessionChange(listener: McpSessionChangeListener): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Takes (or keeps) the right to hold the session's GET stream; false when another stream holds it. */
  claimStream(sessionId: string, streamId: string, ttlMs: number): Promise<boolean> {
    return this.pubsub.claim(this.streamKey(sessionId), `${this.origin}:${streamId}`, ttlMs);
  }

  /** Gives up the right to hold the session's GET stream. */
  releaseStream(sessionId: string, streamId: string): Promise<void> {
    return this.pubsub.release(this.streamKey(sessionId), `${this.origin}:${streamId}`);
  }

  private streamKey(sessionId: string): string {
    return this.mountBus.key('stream', sessionId);
  }

  private async publish(message: McpSessionBusMessage): Promise<void> {
    if (this.mountBus.distributed) await this.mountBus.publish('session-bus', message);
  }

  private cancelWaits(sessionId: string, notification: JsonRpcNotification): void {
    const requestId = notification.params?.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    this.pending.cancelCall(
      sessionId,
      requestId,
      typeof notification.params?.reason === 'string' ? notification.params.reason : 'Cancelled by the client',
    );
  }

  private changed(sessionId: string, principalKey?: string): void {
    for (const listener of this.changeListeners) listener(sessionId, principalKey);
  }

  private receive(message: McpSessionBusMessage): void {
    if (message.o === this.origin) return;
    if (message.t === 'answer') this.pending.settle(message.s, message.m);
    else if (message.t === 'notify') this.streams.deliver(message.s, message.q, JSON.stringify(message.m));
    else if (message.t === 'stale') this.changed(message.s);
    else if (message.t === 'end') {
      this.streams.end(message.s, message.p);
      this.changed(message.s, message.p);
    } else if (message.t === 'cancel' && message.m.method === McpMethod.Cancelled) {
      this.cancelWaits(message.s, message.m);
      const context = {
        principal: { key: '', label: 'session-bus', raw: null },
        sessionId: message.s,
        protocolVersion: message.v,
      };
      this.toolset
        .deliver(message.m, context)
        .catch((error) => this.logger.warn(`Cancellation failed: ${(error as Error)?.message ?? error}`));
    }
  }
}
