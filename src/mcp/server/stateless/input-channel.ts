import { McpRpcError } from '../../errors/mcp-rpc.errors';
import type { McpClientChannel } from '../../interfaces/mcp-delivery.interface';
import type { McpInputRequestOptions, McpRoundState } from '../../interfaces/mcp-tool-context.interface';
import { JsonRpcErrorCode } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { CLIENT_CAPABILITY_OF_REQUEST } from '../../protocol/method-catalog';
import { propagateFromHandlers } from '../dispatch/handler-errors';

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

const METHOD_BY_KIND: Record<string, string> = Object.fromEntries(
  [...CLIENT_CAPABILITY_OF_REQUEST].map(([method, kind]) => [kind, method]),
);

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The method an automatic key (`<kind>-<n>`) stands for; undefined for a key a handler named.
 * Lets a state sealed before keys could be named still be checked.
 */
export function methodOfAutomaticKey(key: string): string | undefined {
  const kind = /^([a-z]+)-\d+$/.exec(key)?.[1];
  return kind === undefined ? undefined : METHOD_BY_KIND[kind];
}

/**
 * Checks the client's answer to one input request against the result type of its method:
 * `-32602` when it cannot be that result (an `ElicitResult` needs an action, a
 * `ListRootsResult` a roots array).
 */
export function checkInputResponse(key: string, method: string | undefined, answer: unknown): Record<string, unknown> {
  const invalid = (message: string) => new McpRpcError(JsonRpcErrorCode.InvalidParams, `Invalid params: ${message}`);
  if (!isObject(answer)) throw invalid(`inputResponses["${key}"] must be an object`);
  if (method === McpMethod.ElicitationCreate && !['accept', 'decline', 'cancel'].includes(answer.action as string)) {
    throw invalid(`inputResponses["${key}"] must be an ElicitResult with action "accept", "decline" or "cancel"`);
  }
  if (method === McpMethod.RootsList && !Array.isArray(answer.roots))
    throw invalid(`inputResponses["${key}"] must be a ListRootsResult with a roots array`);
  return answer;
}

/**
 * The way back to the client of one stateless round (multi round-trip requests). A request is
 * keyed by the handler's `key` option, or else `<kind>-<n>` for the n-th unnamed request: the
 * same on every round, since the handler is replayed from the start. An answer the client gave
 * is checked and returned at once; a missing one is recorded and the handler is stopped with
 * `InputRequiredSignal`. Answers under keys the handler never asks for are ignored.
 */
export class StatelessInputChannel implements McpClientChannel {
  private unnamed = 0;
  private readonly pending = new Map<string, InputRequest>();
  private readonly used = new Map<string, Record<string, unknown>>();
  private readonly kept: Map<string, string>;
  /** @inheritdoc */
  readonly round: McpRoundState;

  /** `kept`: the values the previous round kept (from its sealed state). */
  constructor(
    private readonly answers: Readonly<Record<string, unknown>>,
    kept: Readonly<Record<string, string>> = {},
  ) {
    this.kept = new Map(Object.entries(kept));
    this.round = {
      get: (name) => this.kept.get(name),
      set: (name, value) => {
        if (value === undefined) this.kept.delete(name);
        else this.kept.set(name, value);
      },
    };
  }

  /** @inheritdoc */
  async request(
    method: string,
    params: Record<string, unknown>,
    options?: McpInputRequestOptions,
  ): Promise<Record<string, unknown>> {
    const key = options?.key ?? `${CLIENT_CAPABILITY_OF_REQUEST.get(method) ?? 'input'}-${++this.unnamed}`;
    if (typeof key !== 'string' || key === '')
      throw new TypeError(`The key of an input request must be a non-empty string (got ${JSON.stringify(key)})`);
    const answer = Object.prototype.hasOwnProperty.call(this.answers, key) ? this.answers[key] : undefined;
    if (answer !== undefined) {
      const checked = checkInputResponse(key, method, answer);
      this.used.set(key, checked);
      return checked;
    }
    this.pending.set(key, { method, params });
    throw new InputRequiredSignal(key);
  }

  /**
   * Records a request the round must ask whatever this round's answers hold (a handler that
   * failed with a URL elicitation required error still needs the user to open its URLs).
   */
  require(key: string, method: string, params: Record<string, unknown>): void {
    this.pending.set(key, { method, params });
  }

  /** True when the handler asked for something this round could not answer. */
  get needsInput(): boolean {
    return this.pending.size > 0;
  }

  /** The unanswered requests, by key, in the order the handler made them. */
  inputRequests(): Record<string, InputRequest> {
    return Object.fromEntries(this.pending);
  }

  /** The values kept for the next round, by name (sealed into its state). */
  keptValues(): Record<string, string> {
    return Object.fromEntries(this.kept);
  }

  /** The answers the handler consumed so far, by key (carried into the next round's state). */
  consumedAnswers(): Record<string, Record<string, unknown>> {
    return Object.fromEntries(this.used);
  }
}
