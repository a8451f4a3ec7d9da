import type { JsonRpcNotification, JsonRpcRequest } from '../../../protocol/jsonrpc';
import type {
  McpTransport,
  McpTransportContext,
  McpTransportDeliverOptions,
  McpTransportResult,
} from '../mcp-transport.interface';
import type { StdioConnection } from './stdio-connection';
import { StdioDeadline } from './stdio-deadline';
import { stdioClosedError, withStdioDetails, type StdioPhase } from './stdio.errors';
import { StdioLauncher } from './stdio-launcher';
import { resolveStdioOptions } from './stdio-options-resolver';
import { StdioPool, type StdioPoolStats } from './stdio-pool';
import type { ResolvedStdioOptions, StdioTransportOptions } from './stdio.options';
import { recordStdioSpawn } from '../../../telemetry/mcp-metrics';
import { startInternalSpan } from '../../../telemetry/mcp-spans';
import { McpAttr } from '../../../telemetry/mcp-telemetry.constants';

/**
 * Reaches an MCP server that runs as a child process speaking newline-delimited JSON-RPC on
 * stdin/stdout.
 *
 * By default every `deliver` is self-contained, because a queued job may run on any worker:
 * spawn, `initialize`, `notifications/initialized`, the message, then shutdown (close stdin,
 * wait, SIGTERM, wait, SIGKILL). A `stateless` (2026-07-28) delivery has no handshake: spawn, the
 * request with its `_meta` envelope, its answer, shutdown. The result is returned the moment it
 * arrives; the shutdown runs after it, never in the caller's time. With `pool` (stateless
 * servers only) warm processes are reused instead.
 *
 * On POSIX every server runs under a small supervisor (see `stdio-supervisor.ts`) that ends
 * it when this process dies, even by SIGKILL, and even when it ignores EOF and SIGTERM: no
 * leftover survives a crashed worker, so there is nothing to clean up at the next boot.
 *
 * Failures reject with `McpTransportError`, `McpTimeoutError` or `McpProtocolError`; their
 * `delivered` flag is true once the request line was written to stdin, and they carry the
 * captured `stderr` and the `pid` (see `StdioErrorDetails`).
 */
export class StdioTransport implements McpTransport {
  private readonly options: ResolvedStdioOptions;
  private readonly launcher: StdioLauncher;
  private readonly pool: StdioPool | null;
  private readonly live = new Set<StdioConnection>();
  private closed = false;

  /** @throws McpConfigurationError when the options cannot work (shell string, pool without stateless...). */
  constructor(options: StdioTransportOptions) {
    this.options = resolveStdioOptions(options);
    this.launcher = new StdioLauncher(this.options);
    this.pool = this.options.pool ? new StdioPool(this.launcher, this.options.pool) : null;
  }

  /** Server processes currently alive or starting (warm pooled ones included). */
  get processCount(): number {
    return this.live.size + (this.pool?.size ?? 0);
  }

  /** Processes of one-shot calls alive now, and the pool's sizes (null without `pool`), for health checks. */
  stats(): { processes: number; pool: StdioPoolStats | null } {
    return { processes: this.processCount, pool: this.pool?.stats() ?? null };
  }

  /** Sends one request (and waits for its response) or one notification. */
  async deliver(
    message: JsonRpcRequest | JsonRpcNotification,
    { context, stateless = false }: McpTransportDeliverOptions,
  ): Promise<McpTransportResult> {
    if (this.closed) throw withStdioDetails(stdioClosedError(context.server), { stderr: '', pid: null });
    const deadline = new StdioDeadline(this.timeoutFor(context), context.signal, context.deadlineAt);
    const rawRequest = JSON.stringify(message);
    if (this.pool) {
      const outcome = await this.pool.run(message, rawRequest, context, deadline, stateless);
      return { ...outcome, sessionId: null, status: null };
    }
    return this.deliverOnce(message, rawRequest, context, deadline, stateless);
  }

  /** Shuts down every process of this transport (in-flight calls fail) and refuses new calls. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([this.pool?.close(), ...[...this.live].map((connection) => this.launcher.shutdown(connection))]);
  }

  private timeoutFor(context: McpTransportContext): number {
    const fromContext = context.timeoutMs;
    return typeof fromContext === 'number' && fromContext > 0 && Number.isFinite(fromContext)
      ? Math.min(fromContext, this.options.timeoutMs)
      : this.options.timeoutMs;
  }

  /**
   * Spawn, handshake, exchange. The caller gets its outcome as soon as it is known: the
   * shutdown sequence (close stdin, SIGTERM, SIGKILL) runs afterwards, tracked by `live` until
   * the process is gone, so a server that ignores EOF and SIGTERM costs the caller nothing. Only
   * a process that already exited is waited for (briefly), so its error carries all of stderr.
   */
  private async deliverOnce(
    message: JsonRpcRequest | JsonRpcNotification,
    rawRequest: string,
    context: McpTransportContext,
    deadline: StdioDeadline,
    stateless: boolean,
  ): Promise<McpTransportResult> {
    let connection: StdioConnection | null = null;
    let phase: StdioPhase = 'spawn';
    const spawning = startInternalSpan('mcp.stdio.spawn', { [McpAttr.ServerName]: context.server });
    try {
      deadline.check();
      connection = this.launcher.spawn(context.server);
      recordStdioSpawn(context.server);
      this.live.add(connection);
      connection.attach(context);
      await this.launcher.started(connection, deadline);
      spawning.end();
      phase = 'initialize';
      const handshake = stateless
        ? undefined
        : await this.launcher.initialize(connection, this.launcher.capabilitiesFor(context), deadline);
      if (handshake) context.onHandshake?.(handshake);
      phase = 'request';
      const exchange = await this.launcher.exchange(connection, message, rawRequest, deadline);
      connection.attach(null);
      const result: McpTransportResult = {
        ...exchange,
        stderr: connection.process.stderr(),
        sessionId: null,
        status: null,
      };
      if (handshake) result.handshake = handshake;
      return result;
    } catch (error) {
      spawning.end(error);
      if (connection) {
        connection.attach(null);
        await this.launcher.settled(connection);
      }
      throw this.launcher.toClientError(error, connection, phase, 0, context.server, deadline);
    } finally {
      if (connection) this.retire(connection);
    }
  }

  private retire(connection: StdioConnection): void {
    const done = this.launcher.shutdown(connection).catch(() => undefined);
    void done.finally(() => this.live.delete(connection));
  }
}
