import {
  McpClientError,
  McpProtocolError,
  McpTimeoutError,
  McpTransportError,
} from '../../../errors/mcp-client.errors';
import type { StdioExit } from './stdio-process';

/** What a stdio failure adds to the typed client error, for the event row and for supervision. */
export interface StdioErrorDetails {
  /** The captured end of the server's stderr (capped like the result's `stderr`). */
  stderr: string;
  /** The pid of the process that failed, or null when none was started. */
  pid: number | null;
}

/** A client error thrown by the stdio transport, with its details attached. */
export type StdioClientError = McpClientError & StdioErrorDetails;

/** Attaches stderr and pid to an error (as enumerable own properties, so they survive logging). */
export function withStdioDetails<E extends McpClientError>(
  error: E,
  details: StdioErrorDetails,
): E & StdioErrorDetails {
  return Object.assign(error, { stderr: details.stderr, pid: details.pid });
}

/** Which step of a call was running when it failed. */
export type StdioPhase = 'spawn' | 'initialize' | 'request' | 'pool';

const PHASE_TEXT: Record<StdioPhase, string> = {
  spawn: 'while starting',
  initialize: 'during the initialize handshake',
  request: 'after the request was sent',
  pool: 'while waiting for a free pooled process',
};

const SPAWN_HINTS: Record<string, string> = {
  ENOENT:
    'the program or the working directory does not exist; the child only gets the PATH of this process and the configured env',
  EACCES: 'the program is not executable by this user',
};

function describeExit(exit: StdioExit): string {
  if (exit.spawnError) {
    const code = exit.spawnError.code ?? exit.spawnError.message;
    const hint = SPAWN_HINTS[code];
    return hint ? `could not be started (${code}: ${hint})` : `could not be started (${code})`;
  }
  if (exit.signal) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code}`;
}

/** The process could not be started, or exited / closed stdout before answering. */
export function stdioExitError(
  server: string,
  argv0: string,
  exit: StdioExit,
  phase: StdioPhase,
  delivered: boolean,
): McpTransportError {
  const what = exit.spawnError
    ? `"${argv0}" ${describeExit(exit)}`
    : `the process ${describeExit(exit)} ${PHASE_TEXT[phase]}`;
  return new McpTransportError(`MCP server "${server}" (stdio): ${what}.`, delivered);
}

/** The deadline passed, or the caller aborted. */
export function stdioTimeoutError(
  server: string,
  timeoutMs: number,
  phase: StdioPhase,
  delivered: boolean,
  aborted: boolean,
): McpTimeoutError {
  const what = aborted ? 'the call was aborted' : `no answer within ${timeoutMs} ms`;
  return new McpTimeoutError(`MCP server "${server}" (stdio): ${what} ${PHASE_TEXT[phase]}.`, delivered, timeoutMs);
}

/** The server broke the protocol (handshake refused, unknown revision, oversized line). */
export function stdioProtocolError(server: string, reason: string, delivered: boolean): McpProtocolError {
  return new McpProtocolError(`MCP server "${server}" (stdio): ${reason}.`, delivered);
}

/** The transport was closed before the call could start. */
export function stdioClosedError(server: string): McpTransportError {
  return new McpTransportError(
    `MCP server "${server}" (stdio): the transport is closed; create a new StdioTransport.`,
    false,
  );
}
