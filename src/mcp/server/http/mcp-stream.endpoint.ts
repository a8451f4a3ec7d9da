import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../config/mcp.options';
import type { McpInboundSessionRecord } from '../../persistence/interfaces/mcp-session-store.interface';
import type { McpEventLog, McpLoggedEvent } from '../pubsub/mcp-event-log.interface';
import { MCP_EVENT_LOG } from '../pubsub/mcp-pubsub.providers';
import { McpSessionBus } from '../sessions/mcp-session-bus';
import { TRANSPORT_ERROR_CODE, sendLimitExceeded, sendRpcError } from '../responses/mcp-http-responses';
import { McpSseWriter, parseEventId } from '../sessions/mcp-sse-writer';
import { McpStreamRegistry, SESSION_STREAM_ID, type McpOpenStream } from '../sessions/mcp-stream-registry';

/** First pause of a resumed POST stream between two reads of the log for what its request still sends. */
const RESUME_POLL_MS = 100;

/** Longest pause between two reads: the pause doubles while nothing new comes, up to this. */
const RESUME_POLL_MAX_MS = 1_000;

/**
 * Opens the standalone GET stream of a session: server->client messages that belong to the
 * session rather than to one request (resource updates, list changes) travel on it. A session
 * has at most one such stream across all replicas (a claim in the pub/sub store, renewed with
 * every keep-alive); a second GET gets 409 while the first is open.
 *
 * Streams are resumable. Session notifications are numbered by the mount's event log (shared
 * by the replicas with Redis) whether or not a stream is open; a GET with `Last-Event-ID:
 * session_<n>` gets every kept event after `n`, then the live ones. A GET with the id of a POST
 * stream's event replays the rest of that stream (its response last) and ends.
 */
@Injectable()
export class McpStreamEndpoint {
  private readonly logger: Logger;

  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    private readonly registry: McpStreamRegistry,
    private readonly bus: McpSessionBus,
    @Inject(MCP_EVENT_LOG) private readonly log: McpEventLog,
  ) {
    this.logger = new Logger(`McpStreamEndpoint:${options.mount}`);
  }

  /** Answers an authenticated GET for a live session with its event stream. */
  async open(session: McpInboundSessionRecord, res: ServerResponse, lastEventId?: string): Promise<void> {
    const resume = parseEventId(lastEventId);
    if (resume && resume.streamId !== SESSION_STREAM_ID) return this.resumeRequestStream(session, resume, res);
    const { keepAliveMs, retryMs, maxBufferedBytes } = this.options.streams;
    const sessionId = session.sessionId;
    const max = this.options.limits.streamsPerPrincipal;
    if (this.registry.countFor(session.principalKey) >= max) {
      return sendLimitExceeded(
        res,
        'streamsPerPrincipal',
        max,
        `Too many open GET streams: this principal already holds ${max} on this server. Close one first`,
      );
    }
    const writer = new McpSseWriter(res, { streamId: SESSION_STREAM_ID, maxBufferedBytes });
    const claimOwner = randomBytes(9).toString('base64url');
    const claimTtl = keepAliveMs * 2;
    if (this.registry.has(sessionId) || !(await this.bus.claimStream(sessionId, claimOwner, claimTtl))) {
      return sendRpcError(res, 409, TRANSPORT_ERROR_CODE, 'Conflict: this session already has an open GET stream');
    }
    let timer: NodeJS.Timeout | undefined;
    // Live events wait here while the missed ones are read, so the client sees them in order.
    let queued: { seq: number; json: string }[] | null = [];
    let last = 0;
    const stream: McpOpenStream = {
      principalKey: session.principalKey,
      deliver: (seq, json) => {
        if (queued) {
          queued.push({ seq, json });
          return true;
        }
        if (seq <= last) return true;
        last = seq;
        return writer.sendAt(seq, json) !== null;
      },
      close: () => {
        clearInterval(timer);
        res.off('close', stream.close);
        this.registry.remove(sessionId, stream);
        writer.end();
        this.bus.releaseStream(sessionId, claimOwner).catch(() => undefined);
      },
    };
    if (res.destroyed) return stream.close();
    this.registry.add(sessionId, stream);
    res.once('close', stream.close);
    let missed: { seq: number; data: string }[];
    try {
      last = resume ? resume.seq : await this.log.lastSeq(sessionId, SESSION_STREAM_ID);
      missed = resume ? await this.log.after(sessionId, SESSION_STREAM_ID, last) : [];
    } catch (error) {
      stream.close();
      throw error;
    }
    writer.open(retryMs, undefined, last);
    const live = queued.sort((x, y) => x.seq - y.seq);
    queued = null;
    for (const event of [...missed.map((e) => ({ seq: e.seq, json: e.data })), ...live])
      stream.deliver(event.seq, event.json);
    timer = setInterval(() => {
      writer.comment('keep-alive');
      this.bus.claimStream(sessionId, claimOwner, claimTtl).catch(() => undefined);
    }, keepAliveMs);
    timer.unref();
  }

  /**
   * Replays what a POST stream sent after the client's last event, then follows it until its
   * response (the final event) was sent, or nothing new came for two keep-alive intervals. It is
   * one of the principal's streams (`limits.streamsPerPrincipal`); past `streams.resumeFollowers`
   * resumptions on this process it ends after the replay, and the client resumes again later.
   * Following reads the event log with a growing pause while nothing comes.
   */
  private async resumeRequestStream(
    session: McpInboundSessionRecord,
    resume: { streamId: string; seq: number },
    res: ServerResponse,
  ): Promise<void> {
    const { retryMs, keepAliveMs, maxBufferedBytes, resumeFollowers } = this.options.streams;
    const max = this.options.limits.streamsPerPrincipal;
    if (this.registry.countFor(session.principalKey) >= max) {
      return sendLimitExceeded(
        res,
        'streamsPerPrincipal',
        max,
        `Too many open GET streams: this principal already holds ${max} on this server. Close one first`,
      );
    }
    const writer = new McpSseWriter(res, { streamId: resume.streamId, maxBufferedBytes });
    let timer: NodeJS.Timeout | undefined;
    let ended = false;
    const letGo = () => {
      ended = true;
      clearTimeout(timer);
      res.off('close', onClose);
      release();
    };
    const end = (graceful = true) => {
      if (ended) return;
      letGo();
      if (graceful) writer.end();
      else res.destroy();
    };
    const onClose = () => end();
    const release = this.registry.trackResumption(session.sessionId, session.principalKey, end);
    res.once('close', onClose);
    let last = resume.seq;
    const replay = (events: McpLoggedEvent[]): boolean => {
      for (const event of events) {
        last = event.seq;
        writer.sendAt(event.seq, event.data);
        if (event.final) return true;
      }
      return false;
    };
    let first: McpLoggedEvent[];
    try {
      first = await this.log.after(session.sessionId, resume.streamId, last);
    } catch (error) {
      // Nothing was written yet: the failure is answered like any other of the request.
      if (!ended) letGo();
      throw error;
    }
    if (ended) return;
    writer.open(retryMs, undefined, last);
    if (replay(first) || this.registry.resuming > resumeFollowers) return end();
    let idleSince = Date.now();
    let pause = RESUME_POLL_MS;
    const step = () => {
      this.log.after(session.sessionId, resume.streamId, last).then(
        (events) => {
          if (ended) return;
          if (replay(events)) return end();
          if (events.length) {
            idleSince = Date.now();
            pause = RESUME_POLL_MS;
          } else {
            pause = Math.min(pause * 2, RESUME_POLL_MAX_MS);
          }
          if (writer.closed || Date.now() - idleSince > keepAliveMs * 2) return end();
          timer = setTimeout(step, pause);
          timer.unref();
        },
        (error) => {
          this.logger.warn(`Resuming stream ${resume.streamId} failed: ${(error as Error)?.message ?? error}`);
          end(false);
        },
      );
    };
    timer = setTimeout(step, pause);
    timer.unref();
  }
}
