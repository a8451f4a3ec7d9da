import { Inject, Injectable, Logger } from '@nestjs/common';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { JsonRpcNotification, JsonRpcResponse } from '../../protocol/jsonrpc';
import type { McpResolvedOptions } from '../config/mcp.options';
import { MCP_PUBSUB, mountBusPrefix, type McpPubSub } from './mcp-pubsub.providers';

/**
 * What travels on a mount's session channel between replicas; `o` is the sending process, `s` the
 * session: a client's answer to a server->client request, a cancellation (`v` the session's
 * protocol revision), a session notification for the GET stream (`q` its sequence number in the
 * event log), the end of a session (`p` the principal key it was bound to) and a changed session
 * record.
 */
export type McpSessionBusMessage =
  | { t: 'answer'; o: string; s: string; m: JsonRpcResponse }
  | { t: 'cancel'; o: string; s: string; m: JsonRpcNotification; v: string }
  | { t: 'notify'; o: string; s: string; m: JsonRpcNotification; q: number }
  | { t: 'end'; o: string; s: string; p?: string }
  | { t: 'stale'; o: string; s: string };

/** A client's answer to a task's input request: a result, or a JSON-RPC error. */
export type McpTaskInputAnswer =
  { result: Record<string, unknown> } | { error: { code: number; message: string; data?: unknown } };

/**
 * What travels on a mount's task channel: `c` a task to cancel, `d` a task that is over, `s` a
 * task whose input requests changed, `i` the answer to input request `key` of a task (for the
 * worker that runs it).
 */
export type McpTaskBusMessage =
  { t: 'c' | 'd' | 's'; id: string } | ({ t: 'i'; id: string; key: string } & McpTaskInputAnswer);

/**
 * What travels on a mount's registry channel: `o` the sending process, `m` the list-changed
 * notification's method, `r` true when the handler switches changed (the receivers reload them).
 */
export interface McpRegistryBusMessage {
  o: string;
  m: string;
  r: boolean;
}

/**
 * What travels on a mount's gateway channel: `o` the sending process, `s` the upstream server
 * (its name in `McpClientModule`), `k` the list it announced as changed. The replica that heard
 * the upstream's list-changed notification tells the others, which read that list again.
 */
export interface McpGatewayBusMessage {
  o: string;
  s: string;
  k: 'tools' | 'prompts' | 'resources';
}

/**
 * Every channel of a mount and the message it carries, declared once. Each channel's name on the
 * pub/sub is `<advanced.pubsub.channelPrefix>:<mount>:<name>`; the names and the JSON shapes are
 * the wire format between replicas, so a rolling upgrade keeps them.
 */
export interface McpMountBusMessages {
  /** Session traffic: answers, cancellations, GET-stream notifications, session ends. */
  'session-bus': McpSessionBusMessage;
  /** Task state changes and input answers. */
  tasks: McpTaskBusMessage;
  /** Runtime registrations and switches: list-changed notifications. */
  registry: McpRegistryBusMessage;
  /** Notifications for the 2026-07-28 listen streams (`subscriptions/listen`). */
  listen: JsonRpcNotification;
  /** Upstream list changes a gateway on the mount heard (`McpGatewayModule`). */
  gateway: McpGatewayBusMessage;
}

/** One of a mount's channels. */
export type McpMountChannel = keyof McpMountBusMessages;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === 'string';
const isNotification = (value: unknown): value is JsonRpcNotification =>
  isObject(value) && value.jsonrpc === '2.0' && isString(value.method) && !('id' in value);
const isResponse = (value: unknown): value is JsonRpcResponse =>
  isObject(value) &&
  value.jsonrpc === '2.0' &&
  (isString(value.id) || typeof value.id === 'number' || value.id === null) &&
  ('result' in value || isObject(value.error));

/** Each channel's check of a decoded message: the only place that reads the wire shapes. */
const GUARDS: { [C in McpMountChannel]: (value: unknown) => value is McpMountBusMessages[C] } = {
  'session-bus': (value): value is McpSessionBusMessage => {
    if (!isObject(value) || !isString(value.o) || !isString(value.s)) return false;
    switch (value.t) {
      case 'answer':
        return isResponse(value.m);
      case 'cancel':
        return isNotification(value.m) && isString(value.v);
      case 'notify':
        return isNotification(value.m) && typeof value.q === 'number';
      case 'end':
        return value.p === undefined || isString(value.p);
      case 'stale':
        return true;
      default:
        return false;
    }
  },
  tasks: (value): value is McpTaskBusMessage => {
    if (!isObject(value) || !isString(value.id)) return false;
    if (value.t === 'c' || value.t === 'd' || value.t === 's') return true;
    return value.t === 'i' && isString(value.key) && (isObject(value.result) || isObject(value.error));
  },
  registry: (value): value is McpRegistryBusMessage =>
    isObject(value) && isString(value.o) && isString(value.m) && typeof value.r === 'boolean',
  listen: isNotification,
  gateway: (value): value is McpGatewayBusMessage =>
    isObject(value) &&
    isString(value.o) &&
    isString(value.s) &&
    (value.k === 'tools' || value.k === 'prompts' || value.k === 'resources'),
};

/** A listener of one channel: gets each well-formed message another replica (or this one) published. */
export type McpMountBusListener<C extends McpMountChannel> = (message: McpMountBusMessages[C]) => void | Promise<void>;

/**
 * A mount's typed bus over its pub/sub: the channel names and the key names of the mount, and each
 * channel's messages encoded and checked in one place. A message that is not JSON, or not of its
 * channel's shape (another version, a stranger on a shared Redis), is dropped with a warning and
 * never reaches a listener.
 */
@Injectable()
export class McpMountBus {
  private readonly logger: Logger;
  private readonly prefix: string;
  /** Each channel's name on the pub/sub, built once (a message is published per session notification). */
  private readonly channels: Readonly<Record<McpMountChannel, string>>;

  constructor(
    @Inject(MCP_MODULE_OPTIONS) options: Pick<McpResolvedOptions, 'mount' | 'pubsub'>,
    @Inject(MCP_PUBSUB) private readonly pubsub: McpPubSub,
  ) {
    this.logger = new Logger(`McpMountBus:${options.mount}`);
    this.prefix = mountBusPrefix(options);
    this.channels = {
      'session-bus': this.key('session-bus'),
      tasks: this.key('tasks'),
      registry: this.key('registry'),
      listen: this.key('listen'),
      gateway: this.key('gateway'),
    };
  }

  /** True when the pub/sub reaches other processes (Redis); a process-local bus reaches only this one. */
  get distributed(): boolean {
    return this.pubsub.distributed;
  }

  /** The name of a key of the mount on the pub/sub's Redis: `<channelPrefix>:<mount>[:<part>...]`. */
  key(...parts: string[]): string {
    return [this.prefix, ...parts].join(':');
  }

  /** Publishes a message on one of the mount's channels. */
  publish<C extends McpMountChannel>(channel: C, message: McpMountBusMessages[C]): Promise<void> {
    return this.pubsub.publish(this.channels[channel], JSON.stringify(message));
  }

  /**
   * Subscribes to one of the mount's channels and resolves once subscribed, with the function that
   * unsubscribes. A listener that throws or rejects is logged; the bus goes on.
   */
  async subscribe<C extends McpMountChannel>(
    channel: C,
    listener: McpMountBusListener<C>,
  ): Promise<() => Promise<void>> {
    const name = this.channels[channel];
    const raw = (payload: string) => {
      const message = this.decode(channel, payload);
      if (message === undefined) return;
      try {
        void Promise.resolve(listener(message)).catch((error: unknown) => this.listenerFailed(channel, error));
      } catch (error) {
        this.listenerFailed(channel, error);
      }
    };
    await this.pubsub.subscribe(name, raw);
    return () => this.pubsub.unsubscribe(name, raw);
  }

  /** The message of a payload, or undefined (and a warning) when it is not of the channel's shape. */
  decode<C extends McpMountChannel>(channel: C, payload: string): McpMountBusMessages[C] | undefined {
    let value: unknown;
    try {
      value = JSON.parse(payload);
    } catch {
      this.logger.warn(`Ignored a ${channel} message that is not JSON`);
      return undefined;
    }
    if (GUARDS[channel](value)) return value;
    this.logger.warn(`Ignored a malformed ${channel} message`);
    return undefined;
  }

  private listenerFailed(channel: McpMountChannel, error: unknown): void {
    this.logger.warn(`A ${channel} message could not be handled: ${(error as Error)?.message ?? String(error)}`);
  }
}

/** Injection token of a mount's `McpMountBus` (for the gateway, which serves one named mount). */
export function getMcpMountBusToken(mount: string): string {
  return `MCP_MOUNT_BUS:${mount}`;
}
