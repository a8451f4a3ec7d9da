import {
  BadRequestException,
  ForbiddenException,
  Logger,
  PayloadTooLargeException,
  UnauthorizedException,
  type ArgumentsHost,
} from '@nestjs/common';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpEventRejectedError } from '../../errors/mcp-event-rejected.errors';
import { McpDatabaseUnavailableError } from '../../errors/mcp-outage.errors';
import { JsonRpcErrorCode } from '../../protocol/jsonrpc';
import { McpHttpExceptionFilter } from './mcp-http-exception.filter';
import { TRANSPORT_ERROR_CODE } from '../responses/mcp-http-responses';

/**
 * A real express app whose one route hands the error under test to the filter, with an
 * ArgumentsHost over the route's own req/res. With `?streaming=1` the route has already sent
 * its headers and the first SSE event, as a stream that fails midway would have.
 */
describe('McpHttpExceptionFilter over a real express response', () => {
  let server: Server;
  let baseUrl: string;
  let filter: McpHttpExceptionFilter;
  let thrown: unknown;
  let logged: jest.SpyInstance;

  beforeAll(async () => {
    const app = express();
    app.post('/mcp', (req, res) => {
      if (req.query.streaming) {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.write('event: message\ndata: {}\n\n');
      }
      const host = {
        switchToHttp: () => ({ getRequest: () => req, getResponse: () => res, getNext: () => undefined }),
      } as unknown as ArgumentsHost;
      filter.catch(thrown, host);
    });
    server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  });

  beforeEach(() => {
    filter = new McpHttpExceptionFilter();
    logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });

  afterEach(() => {
    logged.mockRestore();
    jest.useRealTimers();
  });

  const answer = async (error: unknown, streaming = false) => {
    thrown = error;
    const response = await fetch(`${baseUrl}${streaming ? '?streaming=1' : ''}`, { method: 'POST' });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      body: text && !streaming ? JSON.parse(text) : undefined,
    };
  };

  it('answers a guard 401 with WWW-Authenticate: Bearer and no body', async () => {
    const { status, headers, text } = await answer(new UnauthorizedException());
    expect(status).toBe(401);
    expect(headers.get('www-authenticate')).toBe('Bearer');
    expect(text).toBe('');
    expect(logged).not.toHaveBeenCalled();
  });

  it('answers a guard 403 with a JSON-RPC error carrying its message', async () => {
    const { status, body } = await answer(new ForbiddenException('Origin not allowed'));
    expect(status).toBe(403);
    expect(body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: TRANSPORT_ERROR_CODE, message: 'Origin not allowed' },
    });
  });

  it('answers another HTTP exception with its own status, or only ends a started stream', async () => {
    const { status, body } = await answer(new PayloadTooLargeException('Body too large'));
    expect(status).toBe(413);
    expect(body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: TRANSPORT_ERROR_CODE, message: 'Body too large' },
    });
    const started = await answer(new BadRequestException('late'), true);
    expect(started.status).toBe(200);
    expect(started.text).toBe('event: message\ndata: {}\n\n');
    expect(logged).not.toHaveBeenCalled();
  });

  it('answers a refused audit row with 503 and no Retry-After, or only ends a started stream', async () => {
    const rejected = new McpEventRejectedError('e1', 'tools/call', 'value too long');
    const { status, headers, body } = await answer(rejected);
    expect(status).toBe(503);
    expect(headers.get('retry-after')).toBeNull();
    expect(body.error).toEqual({
      code: JsonRpcErrorCode.InternalError,
      message:
        'Service unavailable: the server could not record this request in its audit log (the database refused the row), so it is not answered',
    });
    const started = await answer(rejected, true);
    expect(started.status).toBe(200);
    expect(started.text).toBe('event: message\ndata: {}\n\n');
    expect(logged).not.toHaveBeenCalled();
  });

  it('answers an unavailable database with 503 and Retry-After: 1, logging the reason without a stack', async () => {
    const error = new McpDatabaseUnavailableError('session lookup', 5000);
    const { status, headers, body } = await answer(error);
    expect(status).toBe(503);
    expect(headers.get('retry-after')).toBe('1');
    expect(body.error).toEqual({
      code: JsonRpcErrorCode.InternalError,
      message: 'Service unavailable: a dependency of the server (its database) cannot be reached; retry later',
    });
    expect(logged).toHaveBeenCalledTimes(1);
    expect(logged).toHaveBeenCalledWith(`Service unavailable: ${error.message}`, undefined);
  });

  it('answers any other error with a bare 500 JSON-RPC error and logs it with its stack', async () => {
    const error = new TypeError('boom');
    const { status, body } = await answer(error);
    expect(status).toBe(500);
    expect(body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: JsonRpcErrorCode.InternalError, message: 'Internal error' },
    });
    expect(logged).toHaveBeenCalledWith('Internal error: boom', error.stack);
  });

  it('answers a thrown non-error value with 500, logging its text', async () => {
    expect((await answer('plain text')).status).toBe(500);
    expect((await answer(undefined)).status).toBe(500);
    expect(logged.mock.calls).toEqual([
      ['Internal error: plain text', undefined],
      ['Internal error: undefined', undefined],
    ]);
  });

  it('only ends a started stream on an unexpected error, still logging it', async () => {
    const started = await answer(new Error('stream broke'), true);
    expect(started.status).toBe(200);
    expect(started.text).toBe('event: message\ndata: {}\n\n');
    expect(logged).toHaveBeenCalledWith('Internal error: stream broke', expect.any(String));
  });

  it('logs the same failure once per ten seconds, and again after', async () => {
    jest.useFakeTimers({
      now: Date.UTC(2025, 0, 1),
      doNotFake: [
        'nextTick',
        'setImmediate',
        'clearImmediate',
        'setTimeout',
        'clearTimeout',
        'setInterval',
        'clearInterval',
        'queueMicrotask',
        'hrtime',
        'performance',
      ],
    });
    for (let i = 0; i < 3; i++) expect((await answer(new Error('same'))).status).toBe(500);
    expect(logged).toHaveBeenCalledTimes(1);
    jest.setSystemTime(Date.UTC(2025, 0, 1) + 9_999);
    await answer(new Error('same'));
    expect(logged).toHaveBeenCalledTimes(1);
    jest.setSystemTime(Date.UTC(2025, 0, 1) + 10_000);
    await answer(new Error('same'));
    expect(logged).toHaveBeenCalledTimes(2);
  });

  it('forgets what it logged once it holds more than a hundred distinct lines, so memory stays bounded', async () => {
    for (let i = 0; i <= 100; i++) await answer(new Error(`distinct ${i}`));
    await answer(new Error('distinct 0'));
    expect(logged).toHaveBeenCalledTimes(101);
    await answer(new Error('distinct 101'));
    expect(logged).toHaveBeenCalledTimes(102);
    await answer(new Error('distinct 101'));
    await answer(new Error('distinct 0'));
    expect(logged).toHaveBeenCalledTimes(103);
  });
});
