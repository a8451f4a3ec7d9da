import { Inject, Injectable, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../config/mcp.options';
import { jsonRpcResult, type JsonRpcId, type JsonRpcNotification } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { StatelessMetaKey, ResultType } from '../../protocol/stateless';
import { McpMountBus } from '../pubsub/mount-bus';
import {
  filterWants,
  selectionOf,
  tagNotification,
  type SubscriptionFilter,
  type SubscriptionSelection,
} from './subscription-filter';

/**
 * Asked before a resource update is written to a listen stream: false when the resource is no
 * longer one its principal may see (switched off for it, or gone since the stream opened).
 */
export type ListenResourceGate = (uri: string) => boolean;

/**
 * Where the messages of one listen stream go: an SSE response over HTTP, frames tagged with the
 * subscription id on the shared channel over stdio.
 */
export interface ListenSink {
  /** Writes one message of the stream (the acknowledgment, then notifications). */
  send(message: object): void;
  /** Keeps an idle stream open; absent where an idle stream costs nothing. */
  keepAlive?(): void;
  /** Ends the stream: with the graceful-closure response, or without one (null) when the client went away. */
  end(response: object | null): void;
  /**
   * Calls `listener` once when the stream ends from outside: the client closed it (`false`), or
   * the transport ends it on the server's initiative and wants the graceful-closure response (`true`).
   */
  onClose(listener: (graceful: boolean) => void): void;
}

/** One open `subscriptions/listen` stream on this process. */
interface ListenStream {
  id: JsonRpcId;
  principalKey: string;
  selection: SubscriptionSelection;
  resourceVisible: ListenResourceGate;
  sink: ListenSink;
  timer: NodeJS.Timeout | null;
}

/**
 * The sink of a listen stream on an HTTP response: the SSE head at once, each message as an event,
 * keep-alive comments, and a response destroyed rather than written to when its client stopped
 * reading (past `maxBufferedBytes`), which would make the process queue every later notification.
 */
export function sseListenSink(res: ServerResponse, maxBufferedBytes: number): ListenSink {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  const write = (chunk: string) => {
    if (res.writableEnded || res.destroyed) return;
    if (res.writableLength > maxBufferedBytes) return void res.destroy();
    res.write(chunk);
  };
  return {
    send: (message) => write(`event: message\ndata: ${JSON.stringify(message)}\n\n`),
    keepAlive: () => write(': keep-alive\n\n'),
    end: (response) => {
      if (res.writableEnded || res.destroyed) return;
      if (response) res.end(`event: message\ndata: ${JSON.stringify(response)}\n\n`);
      else res.end();
    },
    onClose: (listener) => void res.once('close', () => listener(false)),
  };
}

/**
 * The `subscriptions/listen` streams (2026-07-28) open on this process, and the way
 * notifications reach them from any replica: `publish` goes through the mount's pub/sub channel,
 * and every replica writes what it receives to its own streams whose agreed filter wants it,
 * tagged with the subscription id. A stream ends when its client closes it; at shutdown each
 * one gets the graceful-closure response first.
 */
@Injectable()
export class McpListenStreams implements OnModuleInit, BeforeApplicationShutdown {
  private readonly streams = new Set<ListenStream>();
  private readonly perPrincipal = new Map<string, number>();
  private unsubscribe?: () => Promise<void>;

  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    private readonly mountBus: McpMountBus,
  ) {}

  /** @inheritdoc */
  async onModuleInit(): Promise<void> {
    this.unsubscribe = await this.mountBus.subscribe('listen', (notification) => this.deliverHere(notification));
  }

  /** @inheritdoc */
  async beforeApplicationShutdown(): Promise<void> {
    for (const stream of [...this.streams]) this.close(stream, true);
    await this.unsubscribe?.().catch(() => undefined);
  }

  /** How many listen streams are open on this process. */
  get size(): number {
    return this.streams.size;
  }

  /** How many listen streams the principal holds on this process (for `limits.listenStreamsPerPrincipal`). */
  countFor(principalKey: string): number {
    return this.perPrincipal.get(principalKey) ?? 0;
  }

  /** How many principals hold a listen stream here (for leak checks: zero once every stream closed). */
  get principals(): number {
    return this.perPrincipal.size;
  }

  /**
   * Opens the stream of the listen request `id` on `sink`: the acknowledgment of the agreed
   * filter as the first message, then the notifications it wants (and keep-alives where the sink
   * needs them) until the client closes it. `resourceVisible` is asked again before each
   * resource update, so a resource hidden from the principal later is not announced to it.
   */
  open(
    id: JsonRpcId,
    filter: SubscriptionFilter,
    sink: ListenSink,
    principalKey: string,
    resourceVisible: ListenResourceGate = () => true,
  ): void {
    const stream: ListenStream = {
      id,
      principalKey,
      selection: selectionOf(filter),
      resourceVisible,
      sink,
      timer: null,
    };
    if (sink.keepAlive) {
      stream.timer = setInterval(() => sink.keepAlive?.(), this.options.streams.keepAliveMs);
      stream.timer.unref();
    }
    this.streams.add(stream);
    this.perPrincipal.set(principalKey, this.countFor(principalKey) + 1);
    sink.onClose((graceful) => this.close(stream, graceful));
    sink.send(acknowledgment(id, filter));
  }

  /** Delivers a notification to every listen stream, on every replica, whose filter wants it. */
  async publish(notification: JsonRpcNotification): Promise<void> {
    await this.mountBus.publish('listen', notification);
  }

  /** Writes a notification to the listen streams of this process whose filter wants it (each replica does its own). */
  deliverHere(notification: JsonRpcNotification): void {
    const uri = notification.method === McpMethod.ResourcesUpdated ? notification.params?.uri : undefined;
    for (const stream of this.streams) {
      if (!filterWants(stream.selection, notification)) continue;
      if (typeof uri === 'string' && !stream.resourceVisible(uri)) continue;
      stream.sink.send(tagNotification(notification, stream.id));
    }
  }

  private close(stream: ListenStream, graceful: boolean): void {
    if (!this.streams.delete(stream)) return;
    const left = this.countFor(stream.principalKey) - 1;
    if (left > 0) this.perPrincipal.set(stream.principalKey, left);
    else this.perPrincipal.delete(stream.principalKey);
    if (stream.timer) clearInterval(stream.timer);
    const result = { resultType: ResultType.Complete, _meta: { [StatelessMetaKey.SubscriptionId]: stream.id } };
    stream.sink.end(graceful ? jsonRpcResult(stream.id, result) : null);
  }
}

/** The first message of a listen stream: the filter the server agreed to, tagged with the id. */
export function acknowledgment(id: JsonRpcId, filter: SubscriptionFilter): JsonRpcNotification {
  return tagNotification(
    { jsonrpc: '2.0', method: McpMethod.SubscriptionsAcknowledged, params: { notifications: filter } },
    id,
  );
}
