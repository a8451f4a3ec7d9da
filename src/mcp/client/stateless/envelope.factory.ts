import { Injectable } from '@nestjs/common';
import { McpServerRequestDispatcher } from '../handlers/server-request-dispatcher';
import type { McpCallJob } from '../interfaces/mcp-call.interface';
import { HTTP_DEFAULT_CLIENT_INFO } from '../transports/http/http.options';
import type { StatelessEnvelope } from './stateless-request';

/**
 * Builds the `_meta` envelope of stateless requests: the revision, this client's identity, the
 * capabilities its registered handlers serve, and the log level set for the server.
 *
 * The stateless revision has no `logging/setLevel`: the level travels with every request. A level
 * set with `setLogLevel` is kept here, per server and scope key, for the life of this process.
 */
@Injectable()
export class McpEnvelopeFactory {
  private readonly logLevels = new Map<string, string>();

  constructor(private readonly dispatcher: McpServerRequestDispatcher) {}

  /**
   * The envelope of a request made for `job` in `protocolVersion`; `callAnswers`: the call has its
   * own `onServerRequest`, whose capabilities the envelope announces too.
   */
  forCall(
    job: Pick<McpCallJob, 'server' | 'scopeKey'>,
    protocolVersion: string,
    callAnswers = false,
  ): StatelessEnvelope {
    const envelope: StatelessEnvelope = {
      protocolVersion,
      clientInfo: { ...HTTP_DEFAULT_CLIENT_INFO },
      clientCapabilities: this.dispatcher.capabilities(callAnswers),
    };
    const logLevel = this.logLevels.get(this.key(job));
    if (logLevel) envelope.logLevel = logLevel;
    return envelope;
  }

  /** Remembers the log level later requests to the server carry. */
  setLogLevel(job: Pick<McpCallJob, 'server' | 'scopeKey'>, level: string): void {
    this.logLevels.set(this.key(job), level);
  }

  private key(job: Pick<McpCallJob, 'server' | 'scopeKey'>): string {
    return `${job.server}\u0000${job.scopeKey}`;
  }
}
