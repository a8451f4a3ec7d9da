import { Injectable } from '@nestjs/common';
import { McpTool, type McpToolContext } from '../../../src/mcp';
import { McpRpcError } from '../../../src/mcp/errors';

const NO_ARGS = { type: 'object', properties: {} };

/** Waits `ms`; rejects with the signal's reason when the task is cancelled first. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => (clearTimeout(timer), reject(signal.reason));
    const timer = setTimeout(() => (signal.removeEventListener('abort', onAbort), resolve()), ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function stringSchema(property: string): Record<string, unknown> {
  return { type: 'object', properties: { [property]: { type: 'string' } }, required: [property] };
}

/**
 * The fixtures of the `io.modelcontextprotocol/tasks` extension scenarios (SEP-2663,
 * `tasks-*` of the 2026 release), on the fixture's tasks mount. They are ordinary `@McpTool`
 * methods with `task: 'optional' | 'required'`: the module decides, per request, whether the
 * call runs as a task.
 */
@Injectable()
export class TasksTools {
  /** Sync-only: never a task. */
  @McpTool({ name: 'greet', description: 'Greets someone (never a task).', input: stringSchema('name') })
  greet({ name }: { name: string }): string {
    return `Hello, ${name}!`;
  }

  /** Sleeps `seconds`, then answers; a cancelled task stops sleeping and stays cancelled. */
  @McpTool({
    name: 'slow_compute',
    description: 'Sleeps for the given seconds, then answers (a task when the client allows).',
    input: {
      type: 'object',
      properties: { seconds: { type: 'number', minimum: 0 }, label: { type: 'string' } },
      required: ['seconds'],
    },
    task: 'optional',
  })
  async slowCompute({ seconds, label }: { seconds: number; label?: string }, ctx: McpToolContext): Promise<string> {
    await sleep(seconds * 1000, ctx.signal);
    return `Computed ${label ?? 'result'} after ${seconds}s`;
  }

  /** Task-only; after about a second it fails as a tool (`isError`), which completes the task. */
  @McpTool({
    name: 'failing_job',
    description: 'Runs only as a task and reports a tool error after a second.',
    input: NO_ARGS,
    task: 'required',
  })
  async failingJob(_input: unknown, ctx: McpToolContext): Promise<string> {
    await sleep(1000, ctx.signal);
    throw new Error('failing_job failed on purpose');
  }

  /** A JSON-RPC error from inside the task: the task fails with it. */
  @McpTool({
    name: 'protocol_error_job',
    description: 'Fails with a JSON-RPC internal error (the task fails).',
    input: NO_ARGS,
    task: 'optional',
  })
  async protocolErrorJob(): Promise<string> {
    throw new McpRpcError(-32603, 'Internal error: protocol_error_job failed on purpose');
  }

  /** Asks the user to confirm (the task is input_required until tasks/update answers). */
  @McpTool({
    name: 'confirm_delete',
    description: 'Asks for a confirmation before deleting a file.',
    input: stringSchema('filename'),
    task: 'optional',
  })
  async confirmDelete({ filename }: { filename: string }, ctx: McpToolContext): Promise<string> {
    const answer = await ctx.elicit(`Delete ${filename}?`, {
      type: 'object',
      properties: { confirm: { type: 'boolean' } },
      required: ['confirm'],
    });
    return answer.action === 'accept' && answer.content?.confirm === true ? `Deleted ${filename}` : `Kept ${filename}`;
  }

  /** Two questions at once: two input requests outstanding together. */
  @McpTool({ name: 'multi_input', description: 'Asks two questions at once.', input: NO_ARGS, task: 'optional' })
  async multiInput(_input: unknown, ctx: McpToolContext): Promise<string> {
    const [first, second] = await Promise.all([
      ctx.elicit('First name?', stringSchema('name')),
      ctx.elicit('Second name?', stringSchema('name')),
    ]);
    return `Got ${String(first.content?.name)} and ${String(second.content?.name)}`;
  }

  /**
   * MRTR then a task: asks for the user's name in an input_required round of the call itself,
   * and only then becomes a task (`ctx.startTask()`), whose result carries the name.
   */
  @McpTool({
    name: 'test_tool_with_task',
    description: 'Asks for a name, then greets as a task.',
    input: NO_ARGS,
    task: 'required',
    inputBeforeTask: true,
  })
  async toolWithTask(_input: unknown, ctx: McpToolContext): Promise<string> {
    const answer = await ctx.elicit('What is your name?', stringSchema('name'), { key: 'user_name' });
    await ctx.startTask();
    await sleep(200, ctx.signal);
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the conformance client may answer any value; the greeting shows it as text
    return `Hello from the task, ${String(answer.content?.name ?? 'stranger')}!`;
  }
}
