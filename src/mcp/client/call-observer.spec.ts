import type { JsonRpcNotification } from '../protocol/jsonrpc';
import { callEventOf, observeCall, refuseAborted } from './call-observer';
import type { McpCallAttempt } from './interfaces/mcp-call-attempt.interface';
import type { McpCallJob } from './interfaces/mcp-call.interface';
import { McpCallAbortedError } from './mcp-call-aborted.errors';

const job: McpCallJob = {
  server: 'srv',
  method: 'tools/call',
  scopeKey: '',
  timeoutMs: 1000,
  progressToken: 'tok-1',
  forwardLogs: true,
};
const progress = (params: Record<string, unknown>): JsonRpcNotification => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params,
});
const log = (params: Record<string, unknown>): JsonRpcNotification => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params,
});

describe('callEventOf', () => {
  it("passes on the progress of the call's own token only", () => {
    expect(
      callEventOf(job, progress({ progressToken: 'tok-1', progress: 2, total: 5, message: 'm' }), 'session'),
    ).toEqual({
      kind: 'progress',
      progress: { progress: 2, total: 5, message: 'm' },
    });
    expect(callEventOf(job, progress({ progressToken: 'tok-1', progress: 1 }), 'request')).toEqual({
      kind: 'progress',
      progress: { progress: 1 },
    });
    expect(callEventOf(job, progress({ progressToken: 'tok-2', progress: 1 }), 'request')).toBeNull();
    expect(callEventOf(job, progress({ progressToken: 'tok-1', progress: '1' }), 'request')).toBeNull();
    expect(callEventOf({ ...job, progressToken: undefined }, progress({ progress: 1 }), 'request')).toBeNull();
  });

  it("passes on log messages of the call's own stream only, and only when asked", () => {
    expect(callEventOf(job, log({ level: 'info', logger: 'l', data: { a: 1 } }), 'request')).toEqual({
      kind: 'log',
      log: { level: 'info', logger: 'l', data: { a: 1 } },
    });
    expect(callEventOf(job, log({ level: 'info', data: 'x' }), 'request')).toEqual({
      kind: 'log',
      log: { level: 'info', data: 'x' },
    });
    expect(callEventOf(job, log({ level: 'info', data: 'x' }), 'session')).toBeNull();
    expect(callEventOf(job, log({ level: 'info', data: 'x' }), undefined)).toBeNull();
    expect(callEventOf({ ...job, forwardLogs: false }, log({ level: 'info', data: 'x' }), 'request')).toBeNull();
    expect(callEventOf(job, { jsonrpc: '2.0', method: 'notifications/tools/list_changed' }, 'request')).toBeNull();
  });
});

describe('observeCall', () => {
  it('gives every notification to the app-wide listeners and the call its own events', () => {
    const attempt = { id: '1', notify: jest.fn(), report: jest.fn() } as unknown as McpCallAttempt;
    const handler = observeCall(job, attempt);
    const changed: JsonRpcNotification = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };
    handler(changed, 'session');
    handler(progress({ progressToken: 'tok-1', progress: 1 }), 'request');
    expect(attempt.notify).toHaveBeenCalledTimes(2);
    expect(attempt.notify).toHaveBeenNthCalledWith(1, 'srv', changed);
    expect(attempt.report).toHaveBeenCalledTimes(1);
    expect(attempt.report).toHaveBeenCalledWith({ kind: 'progress', progress: { progress: 1 } });
  });
});

describe('refuseAborted', () => {
  it('throws a not-delivered McpCallAbortedError with the reason once the signal aborted', () => {
    const controller = new AbortController();
    const attempt = { signal: controller.signal } as McpCallAttempt;
    expect(() => refuseAborted(job, attempt)).not.toThrow();
    controller.abort('stop');
    const error = (() => {
      try {
        refuseAborted(job, attempt);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(McpCallAbortedError);
    expect(error).toMatchObject({ delivered: false, reason: 'stop', server: 'srv', method: 'tools/call' });
  });
});
