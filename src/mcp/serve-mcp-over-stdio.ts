import { McpConfigurationError } from './errors/mcp-configuration.errors';
import {
  ConsoleLogger,
  Logger,
  type DynamicModule,
  type INestApplicationContext,
  type LoggerService,
  type LogLevel,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { McpPrincipal } from './interfaces/principal.interface';
import { DEFAULT_MOUNT, getMcpStdioEndpointToken } from './mcp.constants';
import { NdjsonDecoder } from './protocol/ndjson';
import type { McpStdioEndpoint } from './server/stdio/mcp-stdio.endpoint';
import { McpDrainService } from './server/shutdown/mcp-drain.service';

/** Nest's console logger on stderr: over stdio, stdout carries JSON-RPC frames only. */
class McpStderrLogger extends ConsoleLogger {
  protected override printMessages(
    messages: unknown[],
    context?: string,
    logLevel?: LogLevel,
    _writeStreamType?: 'stdout' | 'stderr',
    errorStack?: unknown,
  ): void {
    super.printMessages(messages, context, logLevel, 'stderr', errorStack);
  }
}

/**
 * From now on, whatever writes to stdout (`console.log` in a tool, a library's own logs) goes to
 * stderr; the returned `frame` writes to the real stdout.
 */
function takeStdout(): { frame: (text: string) => boolean; restore: () => void } {
  const stdout = process.stdout;
  const stderr = process.stderr;
  const original = Object.getOwnPropertyDescriptor(stdout, 'write');
  const write = stdout.write.bind(stdout);
  Object.defineProperty(stdout, 'write', {
    configurable: true,
    writable: true,
    value: stderr.write.bind(stderr),
  });
  return {
    frame: (text) => write(text),
    restore: () => {
      if (original) Object.defineProperty(stdout, 'write', original);
      else delete (stdout as { write?: unknown }).write;
    },
  };
}

function principalOf(principal: serveMcpOverStdio.Principal): McpPrincipal {
  return {
    key: principal.key,
    label: principal.label ?? principal.key,
    raw: principal.raw ?? null,
    scopes: principal.scopes ?? [],
    roles: principal.roles ?? [],
  };
}

function loggerOf(logger: serveMcpOverStdio.Options['logger']): LoggerService | false {
  if (logger === false) return false;
  if (Array.isArray(logger)) return new McpStderrLogger({ logLevels: logger });
  return logger ?? new McpStderrLogger();
}

/**
 * Serves one mount of an app over stdio, for desktop and IDE clients (Claude Desktop, Cursor,
 * VS Code) that start their MCP servers as child processes: boots the app's Nest application
 * context (no HTTP listener), then reads newline-delimited JSON-RPC from stdin and writes it to
 * stdout. A client that opens with `initialize` gets one 2025 session of the mount, handled like
 * one over Streamable HTTP: the session and audit rows (with the configured principal), guards,
 * tasks, progress, log messages and server->client requests (elicitation, sampling, roots). A
 * request carrying the 2026-07-28 `_meta` envelope is served statelessly, as the mount's HTTP
 * endpoint serves it (`input_required` rounds instead of server->client requests). A malformed
 * line is answered with a JSON-RPC parse error.
 *
 * From the call on, nothing but frames reaches stdout: the logger writes to stderr and so does
 * anything else that writes to stdout (`console.log` in a tool). EOF on stdin (the parent closed
 * it or died), SIGTERM or SIGINT end the serving: the calls in flight finish (within the mount's
 * `shutdown.drainTimeoutMs`), the session is ended, the app closes and, unless `exitProcess` is
 * false, the process exits (0, or 1 when closing failed).
 *
 * @example
 * ```ts
 * void serveMcpOverStdio(AppModule, { principal: { key: 'local' } });
 * ```
 */
export async function serveMcpOverStdio(
  module: Type<unknown> | DynamicModule,
  options: serveMcpOverStdio.Options,
): Promise<serveMcpOverStdio.Server> {
  const out = takeStdout();
  let app: INestApplicationContext;
  try {
    app = await NestFactory.createApplicationContext(module, {
      logger: loggerOf(options.logger),
      abortOnError: false,
    });
  } catch (error) {
    out.restore();
    throw error;
  }
  const logger = new Logger('McpStdio');
  const mount = options.mount ?? DEFAULT_MOUNT;
  let endpoint: McpStdioEndpoint;
  let drain: McpDrainService;
  try {
    endpoint = app.get<McpStdioEndpoint>(getMcpStdioEndpointToken(mount), { strict: false });
    drain = app.get(McpDrainService, { strict: false });
  } catch {
    await app.close().catch(() => undefined);
    out.restore();
    throw new McpConfigurationError(
      `serveMcpOverStdio: the module serves no MCP mount "${mount}": import McpModule.forRoot(...) (with mount: "${mount}" for a named one).`,
    );
  }
  const connection = endpoint.connect(principalOf(options.principal), (json) => out.frame(`${json}\n`));
  const decoder = new NdjsonDecoder(
    { line: (line) => connection.receive(line), overflow: (chars) => connection.refuseOverflow(chars) },
    endpoint.maxLineChars,
  );
  const input = process.stdin;
  const onData = (chunk: string) => decoder.push(chunk);
  let closing: Promise<void> | null = null;
  let ended!: () => void;
  const closed = new Promise<void>((resolve) => (ended = resolve));
  const onEnd = () => {
    decoder.end();
    void close();
  };
  const onSignal = () => void close();
  const close = (): Promise<void> => {
    closing ??= (async () => {
      let failed = false;
      try {
        // Answers may still come in while the calls in flight finish: stdin is read until it ends.
        await drain.drain();
        await connection.settled();
        await connection.end();
      } catch (error) {
        failed = true;
        logger.error(`The session could not be ended: ${(error as Error)?.message ?? String(error)}`);
      }
      input.off('data', onData);
      input.off('end', onEnd);
      input.pause();
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      process.stdout.off('error', onSignal);
      try {
        await app.close();
      } catch (error) {
        failed = true;
        logger.error(`The app could not be closed: ${(error as Error)?.message ?? String(error)}`);
      }
      if (options.exitProcess === false) {
        out.restore();
        return ended();
      }
      // The last frames leave before the process does.
      await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
      process.exit(failed ? 1 : 0);
    })();
    return closing;
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  // EPIPE: the reader of stdout went away, as when the parent died.
  process.stdout.on('error', onSignal);
  input.setEncoding('utf8');
  input.on('data', onData);
  input.once('end', onEnd);
  logger.log(`Serving the MCP mount "${mount}" over stdio for the principal "${options.principal.key}"`);
  return { app, close, closed };
}

/** The types of `serveMcpOverStdio`: `serveMcpOverStdio.Options`, `serveMcpOverStdio.Server`. */
export declare namespace serveMcpOverStdio {
  /** The caller on stdio, from the configuration (a stdio client sends no token): audit rows and the session are bound to it. */
  export interface Principal {
    /** Binds the session and the audit rows, like the key an authorizer returns. */
    key: string;
    /** For people reading the audit trail. @default the key */
    label?: string;
    /** The scopes the caller holds (checked against `requiredScopes` of tools). @default [] */
    scopes?: readonly string[];
    /** The roles the caller holds (checked against `roles` of tools). @default [] */
    roles?: readonly string[];
    /** Anything handlers should find in `ctx.principal.raw`. @default null */
    raw?: unknown;
  }

  /** How `serveMcpOverStdio` serves. */
  export interface Options {
    /** The principal every message of the connection comes from. */
    principal: Principal;
    /** The mount to serve (its `mount` extra). @default 'default' */
    mount?: string;
    /**
     * The app's logger: a `LoggerService` of its own (which must not write to stdout), the log
     * levels of the built-in stderr logger, or false for none. @default Nest's console logger, on stderr
     */
    logger?: LoggerService | LogLevel[] | false;
    /** Exits the process once serving ended (0, or 1 when closing failed). @default true */
    exitProcess?: boolean;
  }

  /** A mount being served over stdio. */
  export interface Server {
    /** The app's application context. */
    app: INestApplicationContext;
    /** Ends the serving as EOF on stdin does: the calls in flight finish, the session ends, the app closes. */
    close(): Promise<void>;
    /** Settles once the serving ended (with `exitProcess: false`; otherwise the process exits first). */
    closed: Promise<void>;
  }
}
