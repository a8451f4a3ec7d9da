import { McpClientError } from './mcp-client.errors';

/** The server did not declare the capability a method needs (e.g. `prompts` for `prompts/list`). */
export class McpCapabilityError extends McpClientError {
  constructor(
    /** Name of the configured server. */
    readonly server: string,
    /** The missing capability, e.g. `prompts`. */
    readonly capability: string,
    /** The method that was refused. */
    readonly method: string,
  ) {
    super(
      `MCP server "${server}" does not declare the "${capability}" capability, so "${method}" was not sent.`,
      false,
    );
  }
}

/** A call named a server that is not configured. */
export class McpUnknownServerError extends McpClientError {
  constructor(
    /** The name that was asked for. */
    readonly server: string,
    /** The configured server names. */
    readonly known: string[],
  ) {
    super(`No MCP server named "${server}" is configured (known: ${known.length ? known.join(', ') : 'none'}).`, false);
  }
}

/** `callTool(name, args)` without a server: no configured server offers the tool. */
export class McpToolNotFoundError extends McpClientError {
  constructor(
    /** The tool name. */
    readonly tool: string,
    /** Servers whose tool list could not be read, so they might offer it. */
    readonly unreachable: string[] = [],
  ) {
    super(
      `No configured MCP server offers the tool "${tool}"` +
        (unreachable.length ? ` (could not list the tools of: ${unreachable.join(', ')})` : '') +
        '. Pass the server name to callTool(server, name, args).',
      false,
    );
  }
}

/** `callTool(name, args)` without a server: more than one server offers the tool. */
export class McpAmbiguousToolError extends McpClientError {
  constructor(
    /** The tool name. */
    readonly tool: string,
    /** Every server that offers it. */
    readonly servers: string[],
  ) {
    super(
      `The tool "${tool}" is offered by several MCP servers (${servers.join(', ')}); pass the server name to callTool(server, name, args).`,
      false,
    );
  }
}

/**
 * A `tools/call` of a tool the client left out of the server's tool list: its `x-mcp-header`
 * annotations break the transport's rules, so its arguments cannot be mirrored into headers.
 * Nothing was sent.
 */
export class McpInvalidToolError extends McpClientError {
  constructor(
    /** Name of the configured server. */
    readonly server: string,
    /** The tool name. */
    readonly tool: string,
    /** What is wrong with the tool's definition. */
    readonly reason: string,
  ) {
    super(
      `The tool "${tool}" of MCP server "${server}" cannot be called: ${reason}. Fix the tool's inputSchema on the server.`,
      false,
    );
  }
}

/**
 * A queued `tools/call` was re-run after its worker died while the call may already have reached
 * the server. It is not sent again (at most once); check the server's side effects instead.
 */
export class McpCallInterruptedError extends McpClientError {
  constructor(
    /** The job id of the call. */
    readonly callId: string,
  ) {
    super(
      `The tools/call of job ${callId} was interrupted (its worker stopped) after it may have reached the server; it is not sent twice.`,
      true,
    );
  }
}

/** `getCallResult` / `waitForCall` with an id the queue does not know (never enqueued, or expired). */
export class McpCallNotFoundError extends McpClientError {
  constructor(
    /** The id that was asked for. */
    readonly callId: string,
  ) {
    super(`No MCP call with id "${callId}" is known (never enqueued here, or its outcome expired).`, false);
  }
}
