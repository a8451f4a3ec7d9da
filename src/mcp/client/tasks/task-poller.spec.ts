import { McpProtocolError, McpTimeoutError } from '../../errors/mcp-client.errors';
import type { McpCallJob } from '../interfaces/mcp-call.interface';
import { McpCallAbortedError } from '../mcp-call-aborted.errors';
import { createdTask, isCreateTaskResult, pollDelay, pollTask } from './task-poller';

const job = (deadlineAt?: number): McpCallJob => ({
  server: 's',
  method: 'tools/call',
  scopeKey: '',
  timeoutMs: 5000,
  ...(deadlineAt !== undefined ? { deadlineAt } : {}),
});

describe('task poller', () => {
  it('bounds the server poll interval to 100 ms - 10 s and defaults to 1 s', () => {
    expect(pollDelay({ pollInterval: 250 })).toBe(250);
    expect(pollDelay({ pollIntervalMs: 300, pollInterval: 250 })).toBe(300);
    expect(pollDelay({ pollInterval: 5 })).toBe(100);
    expect(pollDelay({ pollIntervalMs: 60_000 })).toBe(10_000);
    expect(pollDelay({})).toBe(1000);
    expect(pollDelay({ pollInterval: Number.NaN })).toBe(1000);
  });

  it('tells a CreateTaskResult from a tool result, and reads the task of either revision', () => {
    expect(isCreateTaskResult({ task: { taskId: 't1', status: 'working' } })).toBe(true);
    expect(isCreateTaskResult({ content: [], task: { taskId: 't1' } })).toBe(false);
    expect(isCreateTaskResult({ content: [{ type: 'text', text: 'x' }] })).toBe(false);
    expect(createdTask('s', { task: { taskId: 't1' } })).toEqual({ taskId: 't1' });
    expect(createdTask('s', { resultType: 'task', taskId: 't2', status: 'working' })).toEqual({
      resultType: 'task',
      taskId: 't2',
      status: 'working',
    });
    expect(() => createdTask('s', { resultType: 'task' })).toThrow(McpProtocolError);
  });

  it('asks until the status is terminal and resolves to that answer', async () => {
    const answers = [
      { status: 'working', pollInterval: 100 },
      { status: 'input_required', pollInterval: 100 },
      { status: 'completed', result: 1 },
    ];
    const asked: number[] = [];
    const cancel = jest.fn(async () => undefined);
    const final = await pollTask({
      job: job(),
      taskId: 't',
      get: async () => (asked.push(asked.length), answers[asked.length - 1]),
      cancel,
    });
    expect(final).toEqual({ status: 'completed', result: 1 });
    expect(asked).toEqual([0, 1, 2]);
    expect(cancel).not.toHaveBeenCalled();
  });

  it('hands each input_required answer to onInputRequired before polling on, and ends with its rejection', async () => {
    const answers = [
      { status: 'input_required', inputRequests: { a: {} }, pollInterval: 100 },
      { status: 'working', pollInterval: 100 },
      { status: 'completed' },
    ];
    let asked = 0;
    const seen: unknown[] = [];
    const final = await pollTask({
      job: job(),
      taskId: 't',
      get: async () => answers[asked++],
      cancel: async () => undefined,
      onInputRequired: async (task) => void seen.push(task.inputRequests),
    });
    expect(final).toEqual({ status: 'completed' });
    expect(seen).toEqual([{ a: {} }]);

    const failing = pollTask({
      job: job(),
      taskId: 't',
      get: async () => ({ status: 'input_required' }),
      cancel: async () => undefined,
      onInputRequired: async () => Promise.reject(new Error('no handler')),
    });
    await expect(failing).rejects.toThrow('no handler');
  });

  it('cancels the task and fails with McpTimeoutError (delivered) once the deadline passed', async () => {
    const cancel = jest.fn(async () => undefined);
    const get = jest.fn(async () => ({ status: 'working' }));
    const error = await pollTask({ job: job(Date.now() - 1), taskId: 't9', get, cancel }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpTimeoutError);
    expect(error).toMatchObject({ delivered: true, timeoutMs: 5000 });
    expect((error as Error).message).toBe(
      'MCP server "s": task t9 was still running at the call\'s deadline of 5000 ms; it was cancelled',
    );
    expect(cancel).toHaveBeenCalledTimes(1);
    expect(get).not.toHaveBeenCalled();
  });

  it('cancels the task on abort, even when tasks/cancel fails, and fails with McpCallAbortedError (delivered)', async () => {
    const controller = new AbortController();
    const cancel = jest.fn(async () => {
      throw new Error('gone');
    });
    const get = jest.fn(async () => {
      controller.abort('enough');
      return { status: 'working', pollInterval: 10_000 };
    });
    const error = await pollTask({ job: job(), taskId: 't', signal: controller.signal, get, cancel }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpCallAbortedError);
    expect(error).toMatchObject({ server: 's', method: 'tools/call', delivered: true, reason: 'enough' });
    expect(cancel).toHaveBeenCalledTimes(1);
    expect(get).toHaveBeenCalledTimes(1);
  });
});
