import {
  metrics,
  type Attributes,
  type Counter,
  type Histogram,
  type Meter,
  type MeterProvider,
  type ObservableResult,
} from '@opentelemetry/api';
import { MCP_INSTRUMENTATION_NAME, MCP_INSTRUMENTATION_VERSION } from './mcp-telemetry.constants';

/** Bucket boundaries (seconds) of the duration histograms, as the MCP conventions advise. */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** One reading of an observable gauge: a value and its attributes. */
export interface McpGaugeReading {
  /** The value now. */
  value: number;
  /** Its attributes (e.g. the queue state). */
  attributes?: Attributes;
}

/** Something that reports the current value(s) of a gauge when the SDK collects. */
export type McpGaugeSource = () => McpGaugeReading[] | Promise<McpGaugeReading[]>;

/** The observable gauges of the package, by name, with their unit and description. */
export const MCP_GAUGES = {
  'mcp.server.session.active': {
    unit: '{session}',
    description: 'Sessions (2025-11-25) with a request in progress or a GET stream open on this process, per mount.',
  },
  'mcp.server.stream.active': {
    unit: '{stream}',
    description: 'Open SSE streams of this process (session GET streams and stateless listen streams), per mount.',
  },
  'mcp.client.queue.depth': {
    unit: '{job}',
    description: 'Outbound calls in the client queue, by state (waiting, active, delayed).',
  },
  'mcp.client.stdio.pool.size': {
    unit: '{process}',
    description: 'Live stdio server processes kept by the client, per server.',
  },
} as const;

/** Name of an observable gauge of the package. */
export type McpGaugeName = keyof typeof MCP_GAUGES;

interface Instruments {
  serverDuration: Histogram;
  clientDuration: Histogram;
  queueWait: Histogram;
  jobDuration: Histogram;
  stdioSpawns: Counter;
  auditBatchSize: Histogram;
  auditDuration: Histogram;
}

const sources = new Map<McpGaugeName, Set<McpGaugeSource>>();
const byProvider = new WeakMap<MeterProvider, Instruments>();

function histogram(
  meter: Meter,
  name: string,
  description: string,
  unit = 's',
  boundaries: number[] = DURATION_BUCKETS,
): Histogram {
  return meter.createHistogram(name, { description, unit, advice: { explicitBucketBoundaries: boundaries } });
}

function create(meter: Meter): Instruments {
  for (const [name, { unit, description }] of Object.entries(MCP_GAUGES) as [
    McpGaugeName,
    (typeof MCP_GAUGES)[McpGaugeName],
  ][]) {
    meter.createObservableGauge(name, { unit, description }).addCallback(async (result: ObservableResult) => {
      for (const source of sources.get(name) ?? []) {
        for (const reading of await Promise.resolve(source()).catch(() => [] as McpGaugeReading[]))
          result.observe(reading.value, reading.attributes);
      }
    });
  }
  return {
    serverDuration: histogram(
      meter,
      'mcp.server.operation.duration',
      'MCP request or notification duration as observed on the receiver, until the result or ack is sent.',
    ),
    clientDuration: histogram(
      meter,
      'mcp.client.operation.duration',
      'MCP request or notification duration as observed on the sender, until the response or ack is received.',
    ),
    queueWait: histogram(
      meter,
      'mcp.client.queue.wait.duration',
      'Time an outbound call waited in the client queue, from enqueue to a worker picking it up.',
    ),
    jobDuration: histogram(
      meter,
      'mcp.client.job.duration',
      'Time a worker spent on one attempt of an outbound call (every exchange of the call).',
    ),
    stdioSpawns: meter.createCounter('mcp.client.stdio.spawns', {
      unit: '{process}',
      description: 'stdio server processes the client started.',
    }),
    auditBatchSize: histogram(
      meter,
      'mcp.audit.commit.batch.size',
      'Audit rows (mcp_events) written by one group commit.',
      '{row}',
      [1, 2, 5, 10, 20, 50, 100, 200, 500],
    ),
    auditDuration: histogram(meter, 'mcp.audit.commit.duration', 'Duration of one group commit of audit rows.'),
  };
}

/**
 * The package's instruments on the meter provider registered now (the no-op one when there is
 * none). Looked up per use: a provider registered after boot is picked up, and without one every
 * instrument is a no-op.
 */
export function mcpInstruments(): Instruments {
  const provider = metrics.getMeterProvider();
  let instruments = byProvider.get(provider);
  if (!instruments) {
    instruments = create(provider.getMeter(MCP_INSTRUMENTATION_NAME, MCP_INSTRUMENTATION_VERSION));
    byProvider.set(provider, instruments);
  }
  return instruments;
}

/** Adds a source to one of the package's observable gauges; returns what removes it again. */
export function observeGauge(name: McpGaugeName, source: McpGaugeSource): () => void {
  let set = sources.get(name);
  if (!set) sources.set(name, (set = new Set()));
  set.add(source);
  mcpInstruments();
  return () => void sources.get(name)?.delete(source);
}

/** Records one group commit of audit rows: its size and how long it took. */
export function recordAuditCommit(rows: number, seconds: number, failed: boolean): void {
  const instruments = mcpInstruments();
  const attributes = failed ? { 'error.type': 'commit_failed' } : {};
  instruments.auditBatchSize.record(rows, attributes);
  instruments.auditDuration.record(seconds, attributes);
}

/** Counts one stdio server process the client started. */
export function recordStdioSpawn(server: string): void {
  mcpInstruments().stdioSpawns.add(1, { 'mcp.server.name': server });
}
