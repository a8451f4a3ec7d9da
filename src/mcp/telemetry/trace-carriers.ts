import {
  context as otelContext,
  propagation,
  type Context,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';

/** The `_meta` keys (and HTTP headers) that carry trace context: W3C Trace Context and Baggage. */
export const TRACE_CONTEXT_KEYS = ['traceparent', 'tracestate', 'baggage'] as const;

/** Incoming HTTP headers as Node gives them: lower-case names, a string or a list per name. */
export type McpHeaderBag = Record<string, string | string[] | undefined>;

/** A serialised trace context (the W3C fields), as a queued job carries it. */
export type McpTraceCarrier = Record<string, string>;

function asRecord(value: unknown): Record<string, unknown> | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** Reads propagation fields from a request's `params._meta`: string values only. */
export const metaGetter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === 'string' ? value : undefined;
  },
};

/** Writes propagation fields into a `_meta` object. */
export const metaSetter: TextMapSetter<Record<string, unknown>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** Reads propagation fields from Node's incoming headers (names are matched in lower case). */
export const headerGetter: TextMapGetter<McpHeaderBag> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()],
};

/** Writes propagation fields into a fetch `Headers` object. */
export const fetchHeaderSetter: TextMapSetter<Headers> = {
  set: (carrier, key, value) => carrier.set(key, value),
};

/** True when a `_meta` object carries a trace context of its own (a string `traceparent`). */
export function metaCarriesTrace(meta: unknown): meta is Record<string, unknown> {
  return typeof asRecord(meta)?.traceparent === 'string';
}

/**
 * The context an inbound exchange continues: the trace context of the request's
 * `params._meta` (`traceparent`, `tracestate`, `baggage`) when it carries a `traceparent`, else
 * that of the HTTP headers, over `base` (the active context). The registered propagator does the
 * parsing; without one, `base` comes back unchanged.
 */
export function extractInboundContext(
  params: unknown,
  headers: McpHeaderBag | undefined,
  base: Context = otelContext.active(),
): Context {
  const meta = asRecord(params)?._meta;
  if (metaCarriesTrace(meta)) return propagation.extract(base, meta, metaGetter);
  return headers ? propagation.extract(base, headers, headerGetter) : base;
}

/**
 * Params with the trace context of `ctx` in `params._meta` (over what `_meta` held). Returns
 * `params` itself when the propagator wrote nothing (no SDK, or no span in `ctx`).
 */
export function paramsWithTraceContext(
  params: Record<string, unknown> | undefined,
  ctx: Context = otelContext.active(),
): Record<string, unknown> | undefined {
  const fields: Record<string, unknown> = {};
  propagation.inject(ctx, fields, metaSetter);
  if (!Object.keys(fields).length) return params;
  const meta = asRecord(params?._meta) ?? {};
  return { ...(params ?? {}), _meta: { ...meta, ...fields } };
}

/** Writes the trace context of `ctx` into outgoing HTTP headers (nothing without a propagator). */
export function injectHttpHeaders(headers: Headers, ctx: Context = otelContext.active()): void {
  propagation.inject(ctx, headers, fetchHeaderSetter);
}

/** The trace context of `ctx` as a plain object a queued job can carry; null when there is none. */
export function captureTraceCarrier(ctx: Context = otelContext.active()): McpTraceCarrier | null {
  const carrier: McpTraceCarrier = {};
  propagation.inject(ctx, carrier);
  return Object.keys(carrier).length ? carrier : null;
}

/** The context a queued job continues: its carrier over `base`. */
export function restoreTraceCarrier(carrier: unknown, base: Context = otelContext.active()): Context {
  const fields = asRecord(carrier);
  return fields ? propagation.extract(base, fields, metaGetter) : base;
}
