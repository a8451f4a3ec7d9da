import { Injectable } from '@nestjs/common';
import { McpCallInterruptedError, McpCapabilityError } from '../errors/mcp-client-call.errors';
import { McpClientError } from '../errors/mcp-client.errors';
import type { McpOutboundSessionStore } from '../persistence/interfaces/mcp-outbound-session-store.interface';
import { InjectMcpOutboundSessionStore } from '../persistence/mcp-persistence.constants';
import type { JsonRpcNotification } from '../protocol/jsonrpc';
import { McpMethod } from '../protocol/mcp.methods';
import { STATELESS_PROTOCOL_VERSION } from '../protocol/stateless';
import { allowsMethod, requiredCapability } from './capabilities';
import type { McpCallJob } from './interfaces/mcp-call.interface';
import { McpStatelessCallRunner } from './stateless/stateless-call.runner';
import { McpRevisionNegotiator } from './stateless/revision.negotiator';
import { McpOutboundExchanger } from './outbound-exchange';
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
 * Runs one outbound call, on whichever worker picked it up. First decides the revision (pinned,
 * or the verdict of `version: 'auto'`); a 2026-07-28 server is served by `McpStatelessCallRunner`.
 * On the 2025 path it continues the persisted remote session of (server, scope key), refuses
 * methods the server did not declare, answers server->client requests with the registered
 * handlers, writes one event row per exchange and maps JSON-RPC errors to `McpServerError`.
 * Retries are the queue's business.
 */
@Injectable()
export class McpCallProcessor {
  constructor(
    private readonly transports: McpTransportRegistry,
    @InjectMcpOutboundSessionStore() private readonly sessions: McpOutboundSessionStore,
    private readonly exchanger: McpOutboundExchanger,
    private readonly negotiator: McpRevisionNegotiator,
    private readonly stateless: McpStatelessCallRunner,
  ) {}

  /** Runs the call and resolves to its JSON-RPC result. */
  async process(job: McpCallJob, attempt: McpCallAttempt): Promise<Record<string, unknown>> {
    this.transports.config(job.server);
    let session = await this.sessions.find(job.server, job.scopeKey);
    const notify = (notification: JsonRpcNotification) => attempt.notify(job.server, notification);
    const verdict = await this.negotiator.resolve(job, session, notify);
    if (verdict.era === 'stateless') return this.stateless.run(job, attempt, verdict, session);
    // A row left by a stateless verdict holds no session to continue.
    if (session?.protocolVersion === STATELESS_PROTOCOL_VERSION) session = null;
    if (requiredCapability(job.method) && !session?.serverCapabilities) {
      session = (await this.exchanger.call({ job, session, notify, method: McpMethod.Ping, params: {} })).session;
    }
    if (session?.serverCapabilities && !allowsMethod(session.serverCapabilities, job.method)) {
      throw new McpCapabilityError(job.server, requiredCapability(job.method) as string, job.method);
    }
    const isCall = job.method === McpMethod.ToolsCall;
    if (isCall && !(await attempt.claim())) throw new McpCallInterruptedError(attempt.id);
    try {
      return (await this.exchanger.call({ job, session, notify, method: job.method, params: job.params })).result;
    } catch (error) {
      if (isCall && error instanceof McpClientError && !error.delivered) await attempt.release();
      throw error;
    }
  }
}
