import { context as otelContext, type Attributes } from '@opentelemetry/api';
import type { McpCallJob } from '../interfaces/mcp-call.interface';
import { mcpInstruments } from '../../telemetry/mcp-metrics';
import { errorTypeOf, recordPastSpan } from '../../telemetry/mcp-spans';
import { McpAttr } from '../../telemetry/mcp-telemetry.constants';
import { restoreTraceCarrier } from '../../telemetry/trace-carriers';

/** How a worker picked up one attempt of a call. */
export interface McpPickedAttempt {
  /** `bull` or `inline`. */
  queue: 'bull' | 'inline';
  /** The call id. */
  id: string;
  /** When the call was enqueued (epoch ms), for the first attempt; undefined for a retry. */
  enqueuedAt?: number;
}

/**
 * Runs one attempt of a queued call in the trace context the caller left in the job (`trace`,
 * written at enqueue time in whichever process): on the first attempt the time the call waited
 * in the queue becomes an INTERNAL `mcp.queue.wait` span of that trace and a point of the
 * queue wait histogram; the attempt's duration goes to the job duration histogram.
 */
export async function runQueuedAttempt<T>(
  job: McpCallJob,
  picked: McpPickedAttempt,
  work: () => Promise<T>,
): Promise<T> {
  const parent = restoreTraceCarrier(job.trace);
  const attributes: Attributes = {
    [McpAttr.ServerName]: job.server,
    [McpAttr.MethodName]: job.method,
    'messaging.system': picked.queue,
    'mcp.call.id': picked.id,
  };
  const instruments = mcpInstruments();
  if (picked.enqueuedAt !== undefined) {
    recordPastSpan('mcp.queue.wait', picked.enqueuedAt, attributes, parent);
    instruments.queueWait.record(Math.max(0, Date.now() - picked.enqueuedAt) / 1000, {
      [McpAttr.ServerName]: job.server,
      [McpAttr.MethodName]: job.method,
      'messaging.system': picked.queue,
    });
  }
  const started = performance.now();
  let errorType: string | null = null;
  try {
    return await otelContext.with(parent, work);
  } catch (error) {
    errorType = errorTypeOf(error);
    throw error;
  } finally {
    const metricAttributes: Attributes = {
      [McpAttr.ServerName]: job.server,
      [McpAttr.MethodName]: job.method,
      'messaging.system': picked.queue,
    };
    if (errorType) metricAttributes[McpAttr.ErrorType] = errorType;
    instruments.jobDuration.record((performance.now() - started) / 1000, metricAttributes);
  }
}
