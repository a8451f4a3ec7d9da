import { Inject, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../mcp.options';
import type { McpInboundSessionRecord } from '../../persistence/interfaces/mcp-session-store.interface';
import { McpSessionBus } from '../pubsub/mcp-session-bus';
import { TRANSPORT_ERROR_CODE, sendLimitExceeded, sendRpcError } from './mcp-http-responses';
import { McpSseWriter } from './mcp-sse-writer';
import { McpStreamRegistry, type McpOpenStream } from './mcp-stream-registry';

/**
 * Opens the standalone GET stream of a session: server->client messages that belong to the
 * session rather than to one request (resource updates, list changes) travel on it. A session
 * has at most one such stream across all replicas (a claim in the pub/sub store, renewed with
 * every keep-alive); a second GET gets 409 while the first is open.
 */
@Injectable()
export class McpStreamEndpoint {
  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    private readonly registry: McpStreamRegistry,
    private readonly bus: McpSessionBus,
  ) {}

  /** Answers an authenticated GET for a live session with its event stream. */
  async open(session: McpInboundSessionRecord, res: Response): Promise<void> {
    const { keepAliveMs, retryMs } = this.options.streams;
    const writer = new McpSseWriter(res);
    const sessionId = session.sessionId;
    const claimTtl = keepAliveMs * 2;
    const max = this.options.limits.streamsPerPrincipal;
    if (this.registry.countFor(session.principalKey) >= max) {
      return sendLimitExceeded(res, 'streamsPerPrincipal', max, `Too many open GET streams: this principal already holds ${max} on this server. Close one first`);
    }
    if (this.registry.has(sessionId) || !(await this.bus.claimStream(sessionId, writer.streamId, claimTtl))) {
      return sendRpcError(res, 409, TRANSPORT_ERROR_CODE, 'Conflict: this session already has an open GET stream');
    }
    let timer: NodeJS.Timeout | undefined;
    const stream: McpOpenStream = {
      writer,
      principalKey: session.principalKey,
      close: () => {
        clearInterval(timer);
        res.off('close', stream.close);
        this.registry.remove(sessionId, stream);
        writer.end();
        this.bus.releaseStream(sessionId, writer.streamId).catch(() => undefined);
      },
    };
    if (res.destroyed) return stream.close();
    this.registry.add(sessionId, stream);
    res.once('close', stream.close);
    writer.open(retryMs);
    timer = setInterval(() => {
      writer.comment('keep-alive');
      this.bus.claimStream(sessionId, writer.streamId, claimTtl).catch(() => undefined);
    }, keepAliveMs);
    timer.unref();
  }
}
