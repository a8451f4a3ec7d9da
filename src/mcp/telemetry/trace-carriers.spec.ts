import { context, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  captureTraceCarrier,
  extractInboundContext,
  injectHttpHeaders,
  metaCarriesTrace,
  paramsWithTraceContext,
  restoreTraceCarrier,
} from './trace-carriers';

const META_PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const HEADER_PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

function traceIdOf(ctx: ReturnType<typeof extractInboundContext>): string | undefined {
  return trace.getSpanContext(ctx)?.traceId;
}

describe('trace carriers over _meta and headers', () => {
  beforeAll(() =>
    propagation.setGlobalPropagator(
      new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
    ),
  );
  afterAll(() => propagation.disable());

  it('takes the parent from params._meta, with its tracestate and baggage', () => {
    const ctx = extractInboundContext(
      { _meta: { traceparent: META_PARENT, tracestate: 'vendor=1', baggage: 'user=alice' } },
      {},
      ROOT_CONTEXT,
    );
    const span = trace.getSpanContext(ctx);
    expect(span).toMatchObject({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      isRemote: true,
    });
    expect(span?.traceState?.get('vendor')).toBe('1');
    expect(propagation.getBaggage(ctx)?.getEntry('user')?.value).toBe('alice');
  });

  it('takes the parent from the HTTP traceparent header when _meta has none', () => {
    expect(
      traceIdOf(
        extractInboundContext({ name: 'x', _meta: { progressToken: 1 } }, { traceparent: HEADER_PARENT }, ROOT_CONTEXT),
      ),
    ).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(traceIdOf(extractInboundContext(undefined, { traceparent: HEADER_PARENT }, ROOT_CONTEXT))).toBe(
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
  });

  it('prefers _meta over the header when both carry one', () => {
    expect(
      traceIdOf(
        extractInboundContext({ _meta: { traceparent: META_PARENT } }, { traceparent: HEADER_PARENT }, ROOT_CONTEXT),
      ),
    ).toBe('0af7651916cd43dd8448eb211c80319c');
  });

  it('ignores a malformed traceparent and a non-string one', () => {
    expect(
      traceIdOf(extractInboundContext({ _meta: { traceparent: 'not-a-traceparent' } }, {}, ROOT_CONTEXT)),
    ).toBeUndefined();
    expect(metaCarriesTrace({ traceparent: 42 })).toBe(false);
    expect(
      traceIdOf(extractInboundContext({ _meta: { traceparent: 42 } }, { traceparent: HEADER_PARENT }, ROOT_CONTEXT)),
    ).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });

  it('writes the context into _meta next to what it held, into headers and into a job carrier, and reads it back', () => {
    const parent = extractInboundContext(
      { _meta: { traceparent: META_PARENT, baggage: 'user=alice' } },
      {},
      ROOT_CONTEXT,
    );
    const params = paramsWithTraceContext({ name: 'echo', _meta: { progressToken: 'p1' } }, parent);
    expect(params).toEqual({
      name: 'echo',
      _meta: { progressToken: 'p1', traceparent: META_PARENT, baggage: 'user=alice' },
    });
    const headers = new Headers();
    injectHttpHeaders(headers, parent);
    expect(headers.get('traceparent')).toBe(META_PARENT);
    const carrier = captureTraceCarrier(parent);
    expect(carrier).toEqual({ traceparent: META_PARENT, baggage: 'user=alice' });
    expect(traceIdOf(restoreTraceCarrier(JSON.parse(JSON.stringify(carrier)), ROOT_CONTEXT))).toBe(
      '0af7651916cd43dd8448eb211c80319c',
    );
  });

  it('leaves params, headers and jobs untouched when there is no trace context', () => {
    const params = { name: 'echo' };
    expect(paramsWithTraceContext(params, ROOT_CONTEXT)).toBe(params);
    expect(paramsWithTraceContext(undefined, ROOT_CONTEXT)).toBeUndefined();
    const headers = new Headers();
    injectHttpHeaders(headers, ROOT_CONTEXT);
    expect([...headers.keys()]).toEqual([]);
    expect(captureTraceCarrier(ROOT_CONTEXT)).toBeNull();
    expect(restoreTraceCarrier(undefined, ROOT_CONTEXT)).toBe(ROOT_CONTEXT);
    expect(context.active()).toBe(ROOT_CONTEXT);
  });
});
