import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { McpCallInterruptedError, McpCapabilityError } from '../errors/mcp-client-call.errors';
import { McpClientError, McpServerError } from '../errors/mcp-client.errors';
import type { McpOutboundSession } from '../persistence/entities/outbound-session.entity';
import { McpOutboundSessionStore } from '../persistence/outbound-session.store';
import type { JsonRpcNotification, JsonRpcRequest } from '../protocol/jsonrpc';
import { McpMethod } from '../protocol/mcp.methods';
import { allowsMethod, requiredCapability } from './capabilities';
import { McpServerRequestDispatcher } from './handlers/server-request.dispatcher';
import type { McpCallJob } from './interfaces/mcp-call.interface';
import { McpOutboundEventRecorder } from './outbound-event.recorder';
import type { McpTransportResult } from './transports/mcp-transport.interface';
import { McpTransportRegistry } from './transports/transport.registry';

/** What the queue knows about the run of one call. */
export interface McpCallAttempt {
  /** The call id (Bull job id, or the inline id). */
  id: string;
  /**
   * Durably marks the call as handed to the transport. Resolves false when an earlier run of the
   * same call already did (its worker died): the call must not be sent again.
   */
  claim(): Promise<boolean>;
  /** Removes the mark: the delivery provably never reached the server. */
  release(): Promise<void>;
  /** Passes a server notification on to whoever listens (e.g. caches of tool lists). */
  notify(server: string, notification: JsonRpcNotification): void;
}

/**
 * Runs one outbound call, on whichever worker picked it up: continues the persisted remote
 * session of (server, scope key), refuses methods the server did not declare, answers
 * server->client requests with the registered handlers, writes one event row per exchange and
 * maps JSON-RPC errors to `McpServerError`. Retries are the queue's business.
 */
@Injectable()
export class McpCallProcessor {
  constructor(
    private readonly transports: McpTransportRegistry,
    private readonly sessions: McpOutboundSessionStore,
    private readonly recorder: McpOutboundEventRecorder,
    private readonly dispatcher: McpServerRequestDispatcher,
  ) {}

  /** Runs the call and resolves to its JSON-RPC result. */
  async process(job: McpCallJob, attempt: McpCallAttempt): Promise<Record<string, unknown>> {
    this.transports.config(job.server);
    let session = await this.sessions.find(job.server, job.scopeKey);
    if (requiredCapability(job.method) && !session?.serverCapabilities) {
      session = (await this.exchange(job, session, attempt, McpMethod.Ping, {})).session;
    }
    if (session?.serverCapabilities && !allowsMethod(session.serverCapabilities, job.method)) {
      throw new McpCapabilityError(job.server, requiredCapability(job.method) as string, job.method);
    }
    const isCall = job.method === McpMethod.ToolsCall;
    if (isCall && !(await attempt.claim())) throw new McpCallInterruptedError(attempt.id);
    try {
      return (await this.exchange(job, session, attempt, job.method, job.params)).result;
    } catch (error) {
      if (isCall && error instanceof McpClientError && !error.delivered) await attempt.release();
      throw error;
    }
  }

  private async exchange(
    job: McpCallJob,
    session: McpOutboundSession | null,
    attempt: McpCallAttempt,
    method: string,
    params: Record<string, unknown> | undefined,
  ): Promise<{ result: Record<string, unknown>; session: McpOutboundSession | null }> {
    const message: JsonRpcRequest = { jsonrpc: '2.0', id: randomUUID(), method, ...(params ? { params } : {}) };
    const startedAt = new Date();
    const started = performance.now();
    let outcome: McpTransportResult | undefined;
    let failure: unknown;
    try {
      outcome = await this.transports.get(job.server).deliver(message, {
        sessionId: session?.remoteSessionId ?? null,
        protocolVersion: session?.protocolVersion ?? null,
        context: {
          server: job.server,
          scopeKey: job.scopeKey,
          timeoutMs: job.timeoutMs,
          onServerRequest: this.dispatcher.forCall(job.server, job.scopeKey),
          onNotification: (notification) => attempt.notify(job.server, notification),
        },
      });
    } catch (error) {
      failure = error;
    }
    const durationMs = performance.now() - started;
    const updated = outcome ? await this.remember(job, session, outcome) : session;
    await this.recorder.record({
      server: job.server,
      scopeKey: job.scopeKey,
      sessionRef: updated?.id ?? null,
      protocolVersion: updated?.protocolVersion ?? null,
      message,
      response: outcome?.body ?? null,
      status: outcome?.status ?? (failure as { status?: number } | undefined)?.status ?? null,
      startedAt,
      durationMs,
      stderr: outcome?.stderr ?? (failure as { stderr?: string } | undefined)?.stderr,
      error: failure,
    });
    if (!outcome) throw failure;
    const body = outcome.body;
    if (body && 'error' in body) throw new McpServerError(body.error);
    return { result: body && 'result' in body ? body.result : {}, session: updated };
  }

  private unchanged(session: McpOutboundSession, handshake: NonNullable<McpTransportResult['handshake']>): boolean {
    return (
      session.protocolVersion === handshake.protocolVersion &&
      JSON.stringify(session.serverCapabilities) === JSON.stringify(handshake.capabilities) &&
      JSON.stringify(session.serverInfo) === JSON.stringify(handshake.serverInfo)
    );
  }

  /** Persists what the exchange taught about the remote session (new id, handshake). */
  private async remember(job: McpCallJob, session: McpOutboundSession | null, outcome: McpTransportResult): Promise<McpOutboundSession | null> {
    const handshake = outcome.handshake;
    const sameSession = session && session.remoteSessionId === outcome.sessionId;
    if (sameSession && (!handshake || this.unchanged(session, handshake))) return session;
    if (!handshake && !session && outcome.sessionId === null) return null;
    const state = {
      remoteSessionId: outcome.sessionId,
      protocolVersion: handshake?.protocolVersion ?? session?.protocolVersion ?? 'unknown',
      serverInfo: handshake?.serverInfo ?? session?.serverInfo ?? null,
      serverCapabilities: handshake?.capabilities ?? session?.serverCapabilities ?? null,
    };
    const id = await this.sessions.save(job.server, job.scopeKey, state);
    const now = new Date();
    return { id, server: job.server, scopeKey: job.scopeKey, ...state, createdAt: session?.createdAt ?? now, updatedAt: now, closedAt: null };
  }
}
