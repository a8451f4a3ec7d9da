import { McpClientError, McpTransportError } from '../../../errors/mcp-client.errors';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../../../protocol/jsonrpc';
import type { McpHandshakeInfo, McpTransportContext } from '../mcp-transport.interface';
import { StdioConnection } from './stdio-connection';
import { StdioDeadlineExceeded, type StdioDeadline } from './stdio-deadline';
import { buildStdioEnv } from './stdio-env';
import {
  stdioExitError,
  stdioTimeoutError,
  withStdioDetails,
  type StdioClientError,
  type StdioPhase,
} from './stdio.errors';
import { STDIO_HANDLER_CAPABILITIES } from './stdio-handshake';
import type { ResolvedStdioOptions } from './stdio.options';

/** What one exchange produced, before the transport adds handshake and stderr. */
export interface StdioExchange {
  body: JsonRpcResponse | null;
  rawRequest: string;
  rawResponse: string | null;
}

/**
 * Starts server processes and runs exchanges over them; shared by the spawn-per-call path and the
 * pool so both behave the same on the wire.
 */
export class StdioLauncher {
  private readonly env: Record<string, string>;

  constructor(private readonly options: ResolvedStdioOptions) {
    this.env = buildStdioEnv(options.env);
  }

  /** The capabilities to declare: the call's own, else configured, else derived from what the call can answer. */
  capabilitiesFor(context: McpTransportContext | null): Record<string, unknown> {
    if (context?.clientCapabilities) return context.clientCapabilities;
    if (this.options.clientCapabilities) return this.options.clientCapabilities;
    return context === null || context.onServerRequest ? { ...STDIO_HANDLER_CAPABILITIES } : {};
  }

  /** Spawns a process (reported to `onSpawn`) without waiting for it. */
  spawn(server: string): StdioConnection {
    const connection = new StdioConnection(server, {
      argv: this.options.command,
      env: this.env,
      cwd: this.options.cwd,
      stderrLimitBytes: this.options.stderrLimitBytes,
      maxMessageChars: this.options.maxMessageChars,
      orphanGraceMs: this.options.killGraceMs,
    });
    const onSpawn = this.options.onSpawn;
    if (onSpawn) {
      void connection.process.started.then((pid) => {
        try {
          if (pid !== undefined) onSpawn(pid);
        } catch {
          // An observer's failure must not leave a process without its call.
        }
      });
    }
    return connection;
  }

  /**
   * Waits until the server runs (its pid is known), so a failed start is reported as such and
   * `onSpawn` has seen the pid before the first answer can arrive.
   */
  async started(connection: StdioConnection, deadline: StdioDeadline): Promise<void> {
    const pid = await deadline.race(connection.process.started);
    if (pid === undefined)
      throw stdioExitError(connection.server, this.options.command[0], await connection.process.exit, 'spawn', false);
  }

  /**
   * When the process is already gone, waits (briefly) for its pipes to drain so an error carries
   * the whole stderr. A live one is not waited for: its shutdown runs after the call.
   */
  async settled(connection: StdioConnection): Promise<void> {
    if (!connection.process.running) await connection.process.drained;
  }

  /** Runs the handshake on a fresh connection. */
  initialize(
    connection: StdioConnection,
    capabilities: Record<string, unknown>,
    deadline: StdioDeadline,
  ): Promise<McpHandshakeInfo> {
    return connection.initialize(capabilities, this.options.clientInfo, this.options.protocolVersion, deadline);
  }

  /** Sends the caller's message: waits for the response of a request, only writes a notification. */
  async exchange(
    connection: StdioConnection,
    message: JsonRpcRequest | JsonRpcNotification,
    rawRequest: string,
    deadline: StdioDeadline,
  ): Promise<StdioExchange> {
    const line = `${rawRequest}\n`;
    if ('id' in message && message.id !== undefined && message.id !== null) {
      const reply = await connection.request(message, 'request', deadline, line);
      return { body: reply.response, rawRequest, rawResponse: reply.raw };
    }
    if (!connection.notify(message, line)) {
      throw stdioExitError(connection.server, this.options.command[0], await connection.process.exit, 'request', false);
    }
    return { body: null, rawRequest, rawResponse: null };
  }

  /** Ends a process with the configured grace periods. */
  shutdown(connection: StdioConnection): Promise<void> {
    return connection.shutdown(this.options.closeGraceMs, this.options.killGraceMs);
  }

  /**
   * Turns whatever a call threw into a typed client error carrying the process's stderr (from
   * `stderrMark` on, as far as it was read) and pid.
   */
  toClientError(
    error: unknown,
    connection: StdioConnection | null,
    phase: StdioPhase,
    stderrMark: number,
    server: string,
    deadline: StdioDeadline,
  ): StdioClientError {
    let typed: McpClientError;
    if (error instanceof McpClientError) typed = error;
    else if (error instanceof StdioDeadlineExceeded)
      typed = stdioTimeoutError(server, deadline.timeoutMs, phase, false, error.aborted);
    else
      typed = new McpTransportError(
        `MCP server "${server}" (stdio): ${error instanceof Error ? error.message : String(error)}`,
        phase === 'request',
      );
    return withStdioDetails(typed, {
      stderr: connection?.process.stderr(stderrMark) ?? '',
      pid: connection?.process.pid ?? null,
    });
  }
}
