import { abortableDelay, backoffDelay, isIdempotent } from './http-delivery-policy';

describe('delivery policy', () => {
  it('treats tools/call as not idempotent, and lists and notifications as idempotent', () => {
    expect(isIdempotent({ jsonrpc: '2.0', id: 1, method: 'tools/call' })).toBe(false);
    expect(isIdempotent({ jsonrpc: '2.0', id: 1, method: 'some/unknown' })).toBe(false);
    expect(isIdempotent({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBe(true);
    expect(isIdempotent({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBe(true);
  });

  it('grows the backoff exponentially up to the cap', () => {
    const options = { initialDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelay(0, options)).toBeGreaterThanOrEqual(80);
    expect(backoffDelay(0, options)).toBeLessThanOrEqual(120);
    expect(backoffDelay(10, options)).toBeLessThanOrEqual(1200);
    expect(backoffDelay(10, options)).toBeGreaterThanOrEqual(800);
  });

  it('stops a delay as soon as the signal aborts', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    const delay = abortableDelay(60_000, controller.signal);
    controller.abort(reason);
    await expect(delay).rejects.toBe(reason);
  });
});
