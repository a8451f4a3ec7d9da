import type { McpClientChannel } from '../../interfaces/mcp-delivery.interface';
import { propagateFromHandlers } from '../toolset';

/** One request the server needs the client to answer before a stateless request can complete. */
export interface InputRequest {
  method: string;
  params: Record<string, unknown>;
}

/**
 * Thrown inside a handler when it asks the client for something this round has no answer to
 * yet. It escapes the tool's `isError` mapping and becomes an `input_required` result.
 */
export class InputRequiredSignal extends Error {
  constructor(readonly key: string) {
    super(`Input required from the client (${key})`);
    this.name = 'InputRequiredSignal';
  }
}

propagateFromHandlers(InputRequiredSignal);

const KIND_BY_METHOD: Record<string, string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/**
 * The way back to the client of one stateless round (multi round-trip requests). The n-th
 * request a handler makes gets the key `<kind>-<n>`, the same on every round of the request:
 * an answer the client already gave is returned at once, a missing one is recorded and the
 * handler is stopped with `InputRequiredSignal`.
 */
export class StatelessInputChannel implements McpClientChannel {
  private calls = 0;
  private readonly pending = new Map<string, InputRequest>();
  private readonly used = new Set<string>();

  constructor(private readonly answers: Readonly<Record<string, Record<string, unknown>>>) {}

  /** @inheritdoc */
  async request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    this.calls += 1;
    const key = `${KIND_BY_METHOD[method] ?? 'input'}-${this.calls}`;
    const answer = this.answers[key];
    if (answer !== undefined) {
      this.used.add(key);
      return answer;
    }
    this.pending.set(key, { method, params });
    throw new InputRequiredSignal(key);
  }

  /** True when the handler asked for something this round could not answer. */
  get needsInput(): boolean {
    return this.pending.size > 0;
  }

  /** The unanswered requests, by key, in the order the handler made them. */
  inputRequests(): Record<string, InputRequest> {
    return Object.fromEntries(this.pending);
  }

  /** The answers the handler consumed so far, by key (carried into the next round's state). */
  consumedAnswers(): Record<string, Record<string, unknown>> {
    return Object.fromEntries([...this.used].map((key) => [key, this.answers[key]]));
  }
}
