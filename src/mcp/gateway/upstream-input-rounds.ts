import type { McpToolContext, McpUrlElicitation } from '../interfaces/mcp-tool-context.interface';
import { McpMethod } from '../protocol/mcp-methods';
import { InputRequiredSignal } from '../server/stateless/input-channel';

/** Where a 2026-07-28 caller's round keeps the upstream's last `input_required` (`McpToolContext.round`). */
export const UPSTREAM_ROUND = 'gateway.upstream';

/** An upstream's `input_required` as the caller's round keeps it: its state, its requests and its number. */
export interface UpstreamRound {
  state?: string;
  requests: Record<string, { method: string; params?: Record<string, unknown> }>;
  round: number;
}

/** The `requestState` a retry of an upstream round carries, when the round had one. */
export function stateOf(upstream: UpstreamRound): { requestState?: string } {
  return upstream.state !== undefined ? { requestState: upstream.state } : {};
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The upstream round a caller's round kept, or undefined (none, or not of this shape). */
export function keptRound(value: string | undefined): UpstreamRound | undefined {
  if (value === undefined) return undefined;
  const parsed: unknown = JSON.parse(value);
  return isRecord(parsed) && isRecord(parsed.requests) && typeof parsed.round === 'number'
    ? (parsed as unknown as UpstreamRound)
    : undefined;
}

/** The upstream round of an `input_required` result, numbered after the previous one. */
export function upstreamRound(server: string, result: Record<string, unknown>, previous: number): UpstreamRound {
  const { inputRequests = {}, requestState } = result;
  if (!isRecord(inputRequests) || (requestState !== undefined && typeof requestState !== 'string'))
    throw new Error(`The upstream server "${server}" answered a malformed input_required`);
  const requests: UpstreamRound['requests'] = {};
  for (const [key, request] of Object.entries(inputRequests)) {
    if (
      !isRecord(request) ||
      typeof request.method !== 'string' ||
      (request.params !== undefined && !isRecord(request.params))
    )
      throw new Error(`The upstream server "${server}" answered an input request "${key}" that is not a request`);
    requests[key] = { method: request.method, ...(request.params ? { params: request.params } : {}) };
  }
  return { ...(requestState !== undefined ? { state: requestState } : {}), requests, round: previous + 1 };
}

/**
 * Asks the caller each request of an upstream round, under a key of its own
 * (`upstream-<round>-<key>`): the answers this round of the caller holds come back by the
 * upstream's keys; the requests it has no answer to are all recorded, then the first
 * `InputRequiredSignal` ends the handler so that the mount answers `input_required` with them.
 */
export async function askCaller(context: McpToolContext, upstream: UpstreamRound): Promise<Record<string, unknown>> {
  const answers: Record<string, unknown> = {};
  let missing: InputRequiredSignal | undefined;
  for (const [key, { method, params = {} }] of Object.entries(upstream.requests)) {
    const options = { key: `upstream-${upstream.round}-${key}` };
    try {
      if (method === McpMethod.ElicitationCreate) {
        const { message, requestedSchema, mode, ...extra } = params;
        answers[key] =
          mode === 'url'
            ? await context.elicit({ ...(params as unknown as McpUrlElicitation), ...options })
            : await context.elicit(
                typeof message === 'string' ? message : '',
                isRecord(requestedSchema) ? requestedSchema : {},
                { ...extra, ...options },
              );
      } else if (method === McpMethod.SamplingCreateMessage) answers[key] = await context.sample(params, options);
      else if (method === McpMethod.RootsList) answers[key] = { roots: await context.listRoots(options) };
      else throw new Error(`it asked ${method}, which the gateway cannot pass on`);
    } catch (error) {
      if (!(error instanceof InputRequiredSignal)) throw error;
      missing ??= error;
    }
  }
  if (missing) throw missing;
  return answers;
}
