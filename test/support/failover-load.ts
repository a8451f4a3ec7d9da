import { Injectable } from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import { McpClientModule, McpClientService, McpModule, McpTool, type McpClientOptions } from '../../src/mcp';
import { McpQueueUnavailableError } from '../../src/mcp/errors';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from './http-app';
import { pollUntil } from './polling';
import type { TestDatabase } from './postgres';

/**
 * What the Redis failover suites share: a tool that counts its runs per tag, callers that loop
 * `tools/call` through the client's queue while a server is killed, and the checks a user makes
 * afterwards (refusals were typed, service came back, nothing ran twice, every answer has its row).
 */

/** Counts its runs per tag, so that a call run twice shows; `hold` waits at a gate the test opens. */
@Injectable()
export class FailoverCountingTools {
  static readonly runs = new Map<string, number>();

  /** Opens the gate the `hold` calls wait at. */
  static open: () => void;
  static readonly gate = new Promise<void>((resolve) => (FailoverCountingTools.open = resolve));

  @McpTool({
    description: 'Counts one run of the tag',
    input: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
  })
  count({ tag }: { tag: string }): string {
    FailoverCountingTools.runs.set(tag, (FailoverCountingTools.runs.get(tag) ?? 0) + 1);
    return tag;
  }

  @McpTool({
    description: 'Counts one run of the tag, then waits until the test opens the gate',
    input: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
  })
  async hold({ tag }: { tag: string }): Promise<string> {
    FailoverCountingTools.runs.set(tag, (FailoverCountingTools.runs.get(tag) ?? 0) + 1);
    await FailoverCountingTools.gate;
    return tag;
  }
}

/** One `callTool` of a loop: when it started and ended, and how. */
export interface FailoverOutcome {
  tag: string;
  startedAt: number;
  endedAt: number;
  error?: unknown;
}

/** Callers looping `count` on `server` until stopped. */
export interface CallLoops {
  readonly outcomes: FailoverOutcome[];
  answered(): FailoverOutcome[];
  /** Waits until `count` calls have answered. */
  untilAnswered(count: number): Promise<void>;
  /** Waits until a call failed after `killedAt` and twenty calls in a row answered after the last failure. */
  untilRecovered(killedAt: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `loopers` callers, each calling `count` with a tag of its own, one call after the other. */
export function startCallLoops(client: McpClientService, server: string, loopers = 4): CallLoops {
  const outcomes: FailoverOutcome[] = [];
  let next = 0;
  let stopping = false;
  const loop = async (looper: number) => {
    while (!stopping) {
      const tag = `l${looper}-${next++}`;
      const startedAt = Date.now();
      try {
        const result = await client.callTool(server, 'count', { tag });
        expect(result.content).toEqual([{ type: 'text', text: tag }]);
        outcomes.push({ tag, startedAt, endedAt: Date.now() });
      } catch (error) {
        outcomes.push({ tag, startedAt, endedAt: Date.now(), error });
        // A refusal comes at once: the loop breathes instead of spinning on it.
        await delay(50);
      }
    }
  };
  const loops = Promise.all(Array.from({ length: loopers }, (_, looper) => loop(looper)));
  const answered = () => outcomes.filter((outcome) => !outcome.error);
  return {
    outcomes,
    answered,
    untilAnswered: async (count) => {
      await pollUntil(`${count} calls answered`, () => (answered().length >= count ? true : undefined), 30_000);
    },
    untilRecovered: async (killedAt) => {
      await pollUntil(
        'twenty calls in a row answered after the switch',
        () => {
          const last = outcomes.map((outcome) => outcome.error !== undefined).lastIndexOf(true);
          const failedAfterKill = last >= 0 && outcomes[last].endedAt >= killedAt;
          return failedAfterKill && outcomes.length - last - 1 >= 20 ? true : undefined;
        },
        60_000,
        100,
      );
    },
    stop: async () => {
      stopping = true;
      await loops;
    },
  };
}

/**
 * Prints how the switch went (`label` names it) and checks that calls were refused during it, each
 * with McpQueueUnavailableError.
 */
export function expectTypedRefusals(label: string, loops: CallLoops, killedAt: number): void {
  const failures = loops.outcomes.filter((outcome) => outcome.error !== undefined);
  const lastFailure = Math.max(...failures.map((outcome) => outcome.endedAt));
  const firstAnswerAfter = Math.min(
    ...loops
      .answered()
      .filter((outcome) => outcome.startedAt >= lastFailure)
      .map((outcome) => outcome.endedAt),
  );
  console.log(
    `${label}: ${loops.outcomes.length} calls, ${failures.length} refused with McpQueueUnavailableError ` +
      `during the switch; calls answer again ${firstAnswerAfter - killedAt} ms after the master was killed`,
  );
  expect(failures.length).toBeGreaterThan(0);
  for (const failure of failures) expect(failure.error).toBeInstanceOf(McpQueueUnavailableError);
}

/**
 * Ten more calls answer without a restart; then no tag ran twice, every answered call ran exactly
 * once, and each has exactly one outbound audit row on `db` (the rows are written in batches).
 */
export async function expectServedOnceAndAudited(
  client: McpClientService,
  server: string,
  loops: CallLoops,
  db: TestDatabase,
): Promise<void> {
  const after = Array.from({ length: 10 }, (_, i) => `after-${i}`);
  await expect(Promise.all(after.map((tag) => client.callTool(server, 'count', { tag })))).resolves.toHaveLength(10);

  const answeredTags = [...loops.answered().map((outcome) => outcome.tag), ...after];
  expect([...FailoverCountingTools.runs.values()].filter((runs) => runs > 1)).toEqual([]);
  expect(answeredTags.filter((tag) => FailoverCountingTools.runs.get(tag) !== 1)).toEqual([]);

  const rows = await pollUntil(
    'the audit row of every answered call',
    async () => {
      const found: Array<{ tag: string }> = await db.dataSource.query(
        `SELECT request->'params'->'arguments'->>'tag' AS tag FROM mcp_events
         WHERE direction = 'outbound' AND server = $1 AND method = 'tools/call'`,
        [server],
      );
      const tags = new Set(found.map((row) => row.tag));
      return answeredTags.every((tag) => tags.has(tag)) ? found : undefined;
    },
    30_000,
    200,
  );
  const perTag = new Map<string, number>();
  for (const row of rows) perTag.set(row.tag, (perTag.get(row.tag) ?? 0) + 1);
  expect([...perTag.entries()].filter(([, count]) => count > 1)).toEqual([]);
}

/** The two apps of a failover suite. */
export interface FailoverApps {
  /** The HTTP MCP server the calls go to (FailoverCountingTools). */
  target: RunningApp;
  /** The app whose client queues the calls on the Redis under test. */
  caller: RunningApp;
  client: McpClientService;
}

/**
 * Starts an HTTP MCP server with FailoverCountingTools, then an app whose client calls it as
 * `remote` through a Bull queue on `redis`: one attempt, Redis commands bounded at 2 s, callers
 * waiting up to 30 s.
 */
export async function startFailoverApps(
  databaseUrl: string,
  redis: McpClientOptions['redis'],
  queue: { name: string; prefix?: string },
): Promise<FailoverApps> {
  const target = await startApp(databaseUrl, {
    imports: [McpModule.forRoot({ auth: fixtureAuth, providers: [FailoverCountingTools] })],
    providers: [FailoverCountingTools],
  });
  const caller = await startApp(databaseUrl, {
    imports: [
      McpClientModule.forRoot({
        servers: { remote: { url: `${target.baseUrl}/mcp`, bearerToken: 'token-alice' } },
        redis,
        queue: { ...queue, attempts: 1, commandTimeoutMs: 2_000 },
        waitTimeoutMs: 30_000,
      }),
    ],
  });
  return { target, caller, client: caller.app.get(McpClientService) };
}
