import type { Logger } from '@nestjs/common';

/** How long one line of a Redis outage is kept quiet after it was logged. */
export const REDIS_OUTAGE_LOG_WINDOW_MS = 10_000;

/** Lines remembered at most; the oldest are forgotten first. */
const MAX_LINES = 100;

/**
 * Logs what a Redis connection reports while it is down (ioredis reports every failed
 * reconnection, a few times a second) once per line and window, so an outage leaves a line every
 * ten seconds per distinct failure instead of flooding the log. One log serves every Redis user
 * of a process that shares it: the session bus, the call queue, the task queue and the retention
 * schedule.
 */
export class McpRedisOutageLog {
  private readonly lastLogged = new Map<string, number>();

  constructor(
    private readonly logger: Pick<Logger, 'warn' | 'error'>,
    private readonly level: 'warn' | 'error' = 'warn',
    private readonly windowMs = REDIS_OUTAGE_LOG_WINDOW_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Logs `line` unless the same line was logged within the window. */
  report(line: string): void {
    const now = this.now();
    const last = this.lastLogged.get(line);
    if (last !== undefined && now - last < this.windowMs) return;
    if (last === undefined && this.lastLogged.size >= MAX_LINES) {
      const oldest = this.lastLogged.keys().next().value;
      if (oldest !== undefined) this.lastLogged.delete(oldest);
    }
    this.lastLogged.delete(line);
    this.lastLogged.set(line, now);
    this.logger[this.level](line);
  }

  /** Reports every `'error'` of `emitter` (an ioredis client, a Bull queue) as `<label>: <message>`. */
  watch(emitter: { on(event: 'error', listener: (error: Error) => void): unknown }, label: string): void {
    emitter.on('error', (error: Error) => this.report(`${label}: ${error?.message ?? String(error)}`));
  }
}
