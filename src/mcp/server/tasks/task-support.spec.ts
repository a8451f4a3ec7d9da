import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { checkedInputBeforeTask, checkedTaskSupport } from './task-support';
import { TASK_WIRE_2025, TASK_WIRE_2026, argumentsDigest, isTaskExpired, taskWireOf, toWireTask } from './task-wire';
import { newTaskRecord } from '../../persistence/new-records';

describe('checkedTaskSupport', () => {
  it('accepts the three values of the specification and refuses anything else at boot, naming the owner', () => {
    expect(['forbidden', 'optional', 'required'].map((value) => checkedTaskSupport(value, 'Tools#x'))).toEqual([
      'forbidden',
      'optional',
      'required',
    ]);
    expect(() => checkedTaskSupport('sometimes', 'Tools#x')).toThrow(McpConfigurationError);
    expect(() => checkedTaskSupport('sometimes', 'Tools#x')).toThrow(
      `Tools#x: @McpTool option "task" is "sometimes"; use 'forbidden', 'optional' or 'required'.`,
    );
  });
});

describe('checkedInputBeforeTask', () => {
  it('takes a boolean on a tool that allows tasks, and refuses it elsewhere at boot, naming the owner', () => {
    expect(checkedInputBeforeTask(undefined, undefined, 'Tools#x')).toBe(false);
    expect(checkedInputBeforeTask(true, 'required', 'Tools#x')).toBe(true);
    expect(checkedInputBeforeTask(true, 'optional', 'Tools#x')).toBe(true);
    expect(checkedInputBeforeTask(false, undefined, 'Tools#x')).toBe(false);
    expect(() => checkedInputBeforeTask('yes', 'optional', 'Tools#x')).toThrow(
      `Tools#x: @McpTool option "inputBeforeTask" is "yes"; use true or false.`,
    );
    expect(() => checkedInputBeforeTask(true, undefined, 'Tools#x')).toThrow(McpConfigurationError);
    expect(() => checkedInputBeforeTask(true, 'forbidden', 'Tools#x')).toThrow(
      `Tools#x: @McpTool option "inputBeforeTask" needs task: 'optional' or 'required' (task is "forbidden").`,
    );
  });
});

describe('task wire helpers', () => {
  it('digests arguments as canonical JSON: key order does not matter, values do', () => {
    expect(argumentsDigest({ b: 1, a: { d: [1, 2], c: 'x' } })).toBe(
      argumentsDigest({ a: { c: 'x', d: [1, 2] }, b: 1 }),
    );
    expect(argumentsDigest({ a: 1 })).not.toBe(argumentsDigest({ a: 2 }));
    expect(argumentsDigest({})).toMatch(/^[0-9a-f]{64}$/);
  });

  it('puts a row on the wire as the Task of 2025-11-25, and says when it expired', () => {
    const now = new Date('2026-01-01T00:00:00.000Z');
    const record = newTaskRecord(
      'm',
      {
        id: 't',
        principalKey: 'k',
        sessionId: null,
        toolName: 'x',
        argumentsDigest: 'd',
        payload: {
          arguments: {},
          meta: null,
          principal: { key: 'k', label: 'k', raw: null },
          protocolVersion: 'v',
          logLevel: null,
        },
        statusMessage: null,
        ttlMs: 1000,
        pollIntervalMs: 50,
      },
      now,
    );
    expect(toWireTask(record)).toEqual({
      taskId: 't',
      status: 'working',
      createdAt: '2026-01-01T00:00:00.000Z',
      lastUpdatedAt: '2026-01-01T00:00:00.000Z',
      ttl: 1000,
      pollInterval: 50,
    });
    expect(toWireTask({ ...record, statusMessage: 'half' })).toMatchObject({ statusMessage: 'half' });
    expect(isTaskExpired(record, new Date('2026-01-01T00:00:00.999Z'))).toBe(false);
    expect(isTaskExpired(record, new Date('2026-01-01T00:00:01.000Z'))).toBe(true);
    expect(isTaskExpired({ ...record, expiresAt: null }, new Date('2100-01-01'))).toBe(false);
  });

  it('picks the wire adapter of the revision: each answers, announces and decides as its revision says', () => {
    const now = new Date('2026-01-01T00:00:00.000Z');
    const record = {
      ...newTaskRecord(
        'm',
        {
          id: 't',
          principalKey: 'k',
          sessionId: 's',
          toolName: 'x',
          argumentsDigest: 'd',
          payload: {
            arguments: {},
            meta: null,
            principal: { key: 'k', label: 'k', raw: null },
            protocolVersion: '2026-07-28',
            logLevel: null,
          },
          statusMessage: null,
          ttlMs: 1000,
          pollIntervalMs: 50,
        },
        now,
      ),
      status: 'completed',
      outcome: { result: { content: [] } },
    };
    expect(taskWireOf('2025-11-25')).toBe(TASK_WIRE_2025);
    expect(taskWireOf('2025-06-18')).toBe(TASK_WIRE_2025);
    expect(taskWireOf('2026-07-28')).toBe(TASK_WIRE_2026);

    expect(TASK_WIRE_2025.created(record)).toEqual({ task: expect.objectContaining({ taskId: 't', ttl: 1000 }) });
    expect(TASK_WIRE_2026.created(record)).toEqual(
      expect.objectContaining({ resultType: 'task', taskId: 't', ttlMs: 1000, pollIntervalMs: 50 }),
    );
    // tasks/get: the Task of 2025, the DetailedTask (with the result) of 2026.
    expect(TASK_WIRE_2025.status(record)).not.toHaveProperty('result');
    expect(TASK_WIRE_2026.status(record)).toMatchObject({ status: 'completed', result: { content: [] } });
    expect(TASK_WIRE_2025.notification(record)).toMatchObject({ to: 'session', method: 'notifications/tasks/status' });
    expect(TASK_WIRE_2026.notification(record)).toMatchObject({ to: 'listen', method: 'notifications/tasks' });
    expect([TASK_WIRE_2025.failsOnToolError, TASK_WIRE_2026.failsOnToolError]).toEqual([true, false]);
    expect([TASK_WIRE_2025.acknowledgesCancel, TASK_WIRE_2026.acknowledgesCancel]).toEqual([false, true]);
    expect([TASK_WIRE_2025.isExtension, TASK_WIRE_2026.isExtension]).toEqual([false, true]);
  });
});
