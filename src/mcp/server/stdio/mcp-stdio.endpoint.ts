import { Inject, Injectable, Logger } from '@nestjs/common';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpEventSink } from '../../persistence/interfaces/mcp-event-sink.interface';
import { InjectMcpEventSink } from '../../persistence/mcp-persistence.constants';
import type { McpResolvedOptions } from '../config/mcp.options';
import { Toolset } from '../dispatch/toolset';
import { MCP_EVENT_LOG } from '../pubsub/mcp-pubsub.providers';
import type { McpEventLog } from '../pubsub/mcp-event-log.interface';
import { McpCachedSessionStore } from '../sessions/mcp-cached-session.store';
import { McpSessionBus } from '../sessions/mcp-session-bus';
import { McpPendingClientRequests } from '../sessions/mcp-session-channel-pending';
import { McpStreamRegistry } from '../sessions/mcp-stream-registry';
import { McpDrainService } from '../shutdown/mcp-drain.service';
import { McpListenAgreement } from '../http/mcp-listen-agreement';
import { McpStatelessAudit } from '../http/mcp-stateless-audit';
import { McpStatelessResponder } from '../stateless/stateless-responder';
import { McpStdioConnection, type McpStdioParts } from './stdio-connection';

/**
 * The stdio transport of one mount: a desktop or IDE client that started this process talks
 * newline-delimited JSON-RPC on its stdin and stdout. Each connection is one 2025 session,
 * served by the same parts as a Streamable HTTP session: the session row, the audit rows, the
 * toolset (guards, tools, tasks), the pending server->client requests and the session bus; a
 * request carrying the 2026-07-28 envelope is served statelessly by the parts of the HTTP
 * stateless path.
 */
@Injectable()
export class McpStdioEndpoint {
  private readonly parts: McpStdioParts;

  constructor(
    @Inject(MCP_MODULE_OPTIONS) options: McpResolvedOptions,
    toolset: Toolset,
    sessions: McpCachedSessionStore,
    @InjectMcpEventSink() events: McpEventSink,
    bus: McpSessionBus,
    pending: McpPendingClientRequests,
    registry: McpStreamRegistry,
    @Inject(MCP_EVENT_LOG) log: McpEventLog,
    drain: McpDrainService,
    responder: McpStatelessResponder,
    audit: McpStatelessAudit,
    listen: McpListenAgreement,
  ) {
    this.parts = {
      options,
      toolset,
      sessions,
      events,
      bus,
      pending,
      registry,
      log,
      drain,
      logger: new Logger(`McpStdioEndpoint:${options.mount}`),
      stateless: { responder, audit, listen },
    };
  }

  /** The longest line a client may send, in characters: the mount's `maxBodyBytes`. */
  get maxLineChars(): number {
    return this.parts.options.maxBodyBytes;
  }

  /**
   * Opens a connection for `principal` (from the configuration: stdio carries no token) whose
   * frames go out through `send`, one JSON text each, without its newline.
   */
  connect(principal: McpPrincipal, send: (json: string) => void): McpStdioConnection {
    return new McpStdioConnection(this.parts, principal, send);
  }
}
