import { Injectable, Logger } from '@nestjs/common';
import { McpTimeoutError, McpTransportError } from '../../errors/mcp-client.errors';
import type {
  McpOutboundSessionRecord,
  McpOutboundSessionStore,
} from '../../persistence/interfaces/mcp-outbound-session-store.interface';
import { InjectMcpOutboundSessionStore } from '../../persistence/mcp-persistence.constants';
import type { JsonRpcNotification } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { STATELESS_PROTOCOL_VERSION } from '../../protocol/stateless';
import { isSupportedSessionVersion } from '../../protocol/revisions';
import type { McpCallJob } from '../interfaces/mcp-call.interface';
import { McpOutboundExchanger } from '../outbound-exchange';
import { McpTransportRegistry } from '../transports/transport-registry';
import { verdictFromAnswer, verdictFromFailure, type McpEraVerdict } from './discover-verdict';
import { McpEnvelopeFactory } from './envelope.factory';
import { withEnvelope } from './stateless-request';

/** Time the `server/discover` probe gets when the server entry sets none. */
const DEFAULT_PROBE_TIMEOUT_MS = 10_000;

/** What a persisted row says about the era of its endpoint, or null when it says nothing. */
function verdictOfRow(row: McpOutboundSessionRecord): McpEraVerdict | null {
  if (row.protocolVersion === STATELESS_PROTOCOL_VERSION) {
    return {
      era: 'stateless',
      version: row.protocolVersion,
      serverInfo: row.serverInfo,
      capabilities: row.serverCapabilities,
    };
  }
  return isSupportedSessionVersion(row.protocolVersion)
    ? { era: 'legacy', reason: 'persisted verdict', version: row.protocolVersion }
    : null;
}

/** The failure of a probe as the caller sees it: the call itself was never sent. */
function undelivered(error: unknown): unknown {
  if (error instanceof McpTimeoutError) return new McpTimeoutError(error.message, false, error.timeoutMs);
  if (error instanceof McpTransportError) {
    const copy = new McpTransportError(error.message, false, error.status);
    // What the caller must fix (e.g. an untrusted authorization server) stays reachable.
    if (error.cause !== undefined) copy.cause = error.cause;
    return copy;
  }
  return error;
}

/**
 * Decides which revision a call speaks: the pinned `version`, or for `'auto'` the verdict on the
 * endpoint, looked up in this process, then among the persisted outbound sessions, and only then
 * probed with `server/discover` (once per endpoint, concurrent calls share the probe). A probe
 * that proves nothing about the era (connection refused, 401, 5xx) fails the call undelivered and
 * leaves no verdict behind.
 */
@Injectable()
export class McpRevisionNegotiator {
  private readonly logger = new Logger(McpRevisionNegotiator.name);
  private readonly verdicts = new Map<string, Promise<McpEraVerdict>>();

  constructor(
    private readonly transports: McpTransportRegistry,
    @InjectMcpOutboundSessionStore() private readonly sessions: McpOutboundSessionStore,
    private readonly exchanger: McpOutboundExchanger,
    private readonly envelopes: McpEnvelopeFactory,
  ) {}

  /** The era and revision of the call's server. */
  resolve(
    job: McpCallJob,
    session: McpOutboundSessionRecord | null,
    notify: (n: JsonRpcNotification) => void,
  ): Promise<McpEraVerdict> {
    const config = this.transports.config(job.server);
    const endpoint = this.transports.endpointKey(job.server);
    const version = endpoint === null ? 'in-process' : (config.version ?? 'auto');
    if (version === STATELESS_PROTOCOL_VERSION) {
      const known = session?.protocolVersion === version;
      return Promise.resolve({
        era: 'stateless',
        version,
        serverInfo: known ? session.serverInfo : null,
        capabilities: known ? session.serverCapabilities : null,
      });
    }
    if (version !== 'auto') return Promise.resolve({ era: 'legacy', reason: `pinned to ${version}` });
    const key = endpoint as string;
    let verdict = this.verdicts.get(key);
    if (!verdict) {
      verdict = this.decide(job, session, notify, key);
      this.verdicts.set(key, verdict);
      verdict.catch(() => this.verdicts.delete(key));
    }
    return verdict;
  }

  /** Drops the verdict on the server's endpoint (its era changed): the next call decides again. */
  async forget(job: McpCallJob): Promise<void> {
    const key = this.transports.endpointKey(job.server);
    if (key) this.verdicts.delete(key);
    await this.sessions.close(job.server, job.scopeKey);
  }

  private async decide(
    job: McpCallJob,
    session: McpOutboundSessionRecord | null,
    notify: (n: JsonRpcNotification) => void,
    key: string,
  ): Promise<McpEraVerdict> {
    const row = session?.endpoint === key ? session : await this.sessions.findVersion(job.server, key);
    const persisted = row ? verdictOfRow(row) : null;
    if (persisted) return persisted;
    const verdict = await this.probe(job, session, notify);
    this.logger.log(
      `MCP server "${job.server}" speaks ${verdict.era === 'stateless' ? verdict.version : `a 2025-era revision (${verdict.reason})`}`,
    );
    if (verdict.era === 'stateless') {
      const state = {
        remoteSessionId: null,
        protocolVersion: verdict.version,
        serverInfo: verdict.serverInfo,
        serverCapabilities: verdict.capabilities,
        endpoint: key,
      };
      await this.sessions.save(job.server, job.scopeKey, state);
    }
    return verdict;
  }

  private async probe(
    job: McpCallJob,
    session: McpOutboundSessionRecord | null,
    notify: (n: JsonRpcNotification) => void,
  ): Promise<McpEraVerdict> {
    const config = this.transports.config(job.server);
    const probeTimeoutMs = config.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
    const probeJob = { ...job, timeoutMs: Math.min(probeTimeoutMs, job.timeoutMs) };
    const params = withEnvelope(undefined, this.envelopes.forCall(job, STATELESS_PROTOCOL_VERSION));
    try {
      const { response } = await this.exchanger.send({
        job: probeJob,
        session,
        notify,
        method: McpMethod.ServerDiscover,
        params,
        statelessVersion: STATELESS_PROTOCOL_VERSION,
      });
      return verdictFromAnswer(job.server, response);
    } catch (error) {
      if (error instanceof McpTimeoutError && probeTimeoutMs < job.timeoutMs)
        return { era: 'legacy', reason: `no answer to server/discover within ${probeTimeoutMs} ms` };
      const verdict = verdictFromFailure(error);
      if (verdict) return verdict;
      throw undelivered(error);
    }
  }
}
