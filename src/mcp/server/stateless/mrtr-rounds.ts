import { Injectable } from '@nestjs/common';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { JsonRpcErrorCode, type JsonRpcRequest } from '../../protocol/jsonrpc';
import { methodFacts } from '../../protocol/method-catalog';
import { StatelessRetryParam, ResultType } from '../../protocol/stateless';
import { StatelessInputChannel, checkInputResponse, methodOfAutomaticKey } from './input-channel';
import { RequestStateCodec, digestParams, type RequestStatePayload } from './request-state-codec';

type Answers = Record<string, unknown>;

function invalid(message: string): McpRpcError {
  return new McpRpcError(JsonRpcErrorCode.InvalidParams, `Invalid params: ${message}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return isObject(value) && Object.values(value).every((entry) => typeof entry === 'string');
}

/**
 * Multi round-trip requests without server-side state: opens a round from a (retried) request
 * by verifying its `requestState` and taking the answers it carries, and closes an unfinished
 * round into an `input_required` result whose sealed state binds the principal, the method, the
 * request's salient params, an expiry and every answer collected so far.
 */
@Injectable()
export class MrtrRounds {
  constructor(private readonly codec: RequestStateCodec) {}

  /**
   * The input channel of one round, or undefined for methods that may not ask for input. Throws
   * `-32602` when the retry fields are malformed or the state fails verification.
   */
  open(request: JsonRpcRequest, principal: McpPrincipal): StatelessInputChannel | undefined {
    const params = request.params ?? {};
    const responses = params[StatelessRetryParam.InputResponses];
    const sealed = params[StatelessRetryParam.RequestState];
    if (responses !== undefined && !isObject(responses))
      throw invalid('inputResponses must be an object keyed by input request');
    if (sealed !== undefined && typeof sealed !== 'string')
      throw invalid('requestState must be the string the server returned');
    if (!methodFacts(request.method)?.inputRequired) return undefined;
    // Without a state the client answers up front; the channel checks each answer the handler uses.
    if (sealed === undefined) return new StatelessInputChannel(responses ?? {});
    const state = this.verify(sealed, request, principal);
    const answers: Answers = { ...state.responses };
    for (const key of state.asked) {
      if (responses?.[key] !== undefined)
        answers[key] = checkInputResponse(key, state.methods?.[key] ?? methodOfAutomaticKey(key), responses[key]);
    }
    return new StatelessInputChannel(answers, isStringRecord(state.kept) ? state.kept : {});
  }

  /** The `input_required` result of a round whose handler is waiting for the client. */
  inputRequired(
    channel: StatelessInputChannel,
    request: JsonRpcRequest,
    principal: McpPrincipal,
  ): Record<string, unknown> {
    const inputRequests = channel.inputRequests();
    const kept = channel.keptValues();
    const requestState = this.codec.seal({
      principal: principal.key,
      method: request.method,
      digest: digestParams(request.params),
      expiresAt: Date.now() + this.codec.ttlMs,
      responses: channel.consumedAnswers(),
      asked: Object.keys(inputRequests),
      methods: Object.fromEntries(Object.entries(inputRequests).map(([key, input]) => [key, input.method])),
      ...(Object.keys(kept).length ? { kept } : {}),
    });
    return { resultType: ResultType.InputRequired, inputRequests, requestState };
  }

  private verify(sealed: string, request: JsonRpcRequest, principal: McpPrincipal): RequestStatePayload {
    const state = this.codec.open(sealed);
    if (!state || !isObject(state.responses) || !Array.isArray(state.asked))
      throw invalid('requestState failed verification');
    if (state.principal !== principal.key) throw invalid('requestState was issued to another principal');
    if (state.method !== request.method || state.digest !== digestParams(request.params)) {
      throw invalid('requestState belongs to another request (method or params differ)');
    }
    if (!(state.expiresAt > Date.now())) throw invalid('requestState has expired; send the request again without it');
    return state;
  }
}
