import { Inject, Injectable, Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpEventSink } from '../../persistence/interfaces/mcp-event-sink.interface';
import type { McpTaskRecord, McpTaskStore } from '../../persistence/interfaces/mcp-task-store.interface';
import { InjectMcpEventSink, InjectMcpTaskStore } from '../../persistence/mcp-persistence.constants';
import { McpMethod } from '../../protocol/mcp-methods';
import { isTerminalTaskStatus } from '../../protocol/tasks';
import type { McpResolvedOptions } from '../config/mcp.options';
import { McpMountBus } from '../pubsub/mount-bus';
import { McpSessionBus } from '../sessions/mcp-session-bus';
import { McpListenStreams } from '../stateless/listen-stream-registry';
import { errorText } from '../tools/tool-result-mapper';
import { taskWireOf } from './task-wire';

/** The outstanding input requests of a task, by key, as its row holds them. */
export type McpTaskInputRequests = Record<string, { method: string; params: Record<string, unknown> }>;

/**
 * The state machine of a mount's tasks. A task is `working` once created, `input_required` while
 * its handler waits for the client, and ends `completed`, `failed` or `cancelled`; every move is
 * one conditional UPDATE of its row (`McpTaskStore.claim`, `setMessage`, `setInputRequests`,
 * `finish`), so two replicas racing for the same move cannot both make it, and an ended task
 * never moves again. Each move that happened is audited (one `mcp_events` row of kind `task`),
 * announced to the client in its revision's notification, and wakes the `tasks/result` calls
 * waiting for the task, here and (on the mount's `tasks` channel) on the other replicas.
 */
@Injectable()
export class McpTaskTransitions {
  private readonly logger: Logger;
  /** Emits a task's id whenever its row changed: the `tasks/result` calls waiting here read it again. */
  private readonly changed = new EventEmitter();

  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    @InjectMcpTaskStore() private readonly store: McpTaskStore,
    @InjectMcpEventSink() private readonly events: McpEventSink,
    private readonly mountBus: McpMountBus,
    private readonly bus: McpSessionBus,
    private readonly listenStreams: McpListenStreams,
  ) {
    this.logger = new Logger(`McpTaskTransitions:${options.mount}`);
    this.changed.setMaxListeners(0);
  }

  /** Sets the status message of a task that is not over; false when the row did not move. */
  async setMessage(id: string, statusMessage: string): Promise<boolean> {
    const record = await this.store.setMessage(id, statusMessage);
    if (!record) return false;
    await this.audit(record, 'message');
    await this.notify(record);
    return true;
  }

  /**
   * Writes a task's outstanding input requests: `input_required` with `requests`, `working` again
   * with null. Nothing moves for a task that is over, or that is already working when there is
   * nothing outstanding (the last of several answers).
   */
  async setInputRequests(id: string, requests: McpTaskInputRequests | null): Promise<void> {
    const current = await this.store.get(id);
    if (!current || isTerminalTaskStatus(current.status) || (!requests && current.status === 'working')) return;
    const record = await this.store.setInputRequests(id, requests);
    if (!record) return;
    await this.audit(
      record,
      requests ? 'input_required' : 'resumed',
      requests ? `task input_required: ${Object.keys(requests).join(', ')}` : undefined,
    );
    await this.notify(record);
    this.changed.emit(id);
    if (this.mountBus.distributed) await this.mountBus.publish('tasks', { t: 's', id });
  }

  /** Ends a task with `status` and `outcome` unless it is over already; the ended row, or null when it did not move. */
  async finish(
    record: McpTaskRecord,
    status: string,
    statusMessage: string | undefined,
    outcome: Record<string, unknown>,
  ): Promise<McpTaskRecord | null> {
    const ended = await this.store.finish(record.id, status, statusMessage, outcome);
    if (!ended) return null;
    await this.audit(ended, status, undefined, outcome);
    await this.notify(ended);
    this.changed.emit(ended.id);
    if (this.mountBus.distributed) await this.mountBus.publish('tasks', { t: 'd', id: ended.id });
    return ended;
  }

  /** A task's row changed on another replica (its message on the `tasks` channel): wakes the waiters here. */
  changedElsewhere(id: string): void {
    this.changed.emit(id);
  }

  /** Resolves when the task's row changes (here or elsewhere), after `ms`, or on abort: the caller reads the row again. */
  waitForChange(id: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.changed.off(id, done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.changed.on(id, done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** One `mcp_events` row (kind `task`) for a move (`transition`: created, started, rerun, a status...). */
  async audit(
    record: McpTaskRecord,
    transition: string,
    note?: string,
    outcome?: Record<string, unknown>,
  ): Promise<void> {
    const result = outcome?.result as Record<string, unknown> | undefined;
    const error = outcome?.error as { code?: number } | undefined;
    await this.events.record({
      direction: 'inbound',
      kind: 'task',
      mount: this.options.mount,
      principalKey: record.principalKey,
      method: McpMethod.ToolsCall,
      protocolVersion: record.payload.protocolVersion,
      request: {
        taskId: record.id,
        tool: record.toolName,
        transition,
        status: record.status,
        statusMessage: record.statusMessage,
        worker: record.worker,
        attempt: record.attempt,
      },
      response: outcome ?? null,
      errorCode: typeof error?.code === 'number' ? error.code : null,
      isError: result?.isError === true,
      createdAt: new Date(),
      durationMs: 0,
      note: note ?? `task ${transition}`,
    });
  }

  /** Tells the client of the task's new state, in its revision's notification; optional (clients poll), so a failure is logged only. */
  private async notify(record: McpTaskRecord): Promise<void> {
    const { to, method, params } = taskWireOf(record.payload.protocolVersion).notification(record);
    if (to === 'session' && !record.sessionId) return;
    try {
      const notification = { jsonrpc: '2.0' as const, method, params };
      // 2026-07-28: to the listen streams (on every replica) that agreed to this task id.
      if (to === 'listen') await this.listenStreams.publish(notification);
      else await this.bus.notifySession(record.sessionId as string, notification);
    } catch (error) {
      this.logger.warn(`Could not send the status of task ${record.id}: ${errorText(error)}`);
    }
  }
}
