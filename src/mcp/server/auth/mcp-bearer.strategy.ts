import { Inject, Injectable, type OnModuleInit, type Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy } from 'passport-http-bearer';
import type { McpAuthorizeFn, McpAuthorizer, McpAuthResult, McpPrincipal } from '../../interfaces/principal.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import { isAuthorizerClass } from '../config/mcp-authorizer-kind';
import type { McpResolvedOptions } from '../config/mcp.options';
import { MCP_ANONYMOUS_PRINCIPAL } from '../pipeline/anonymous-principal';
import { normalizePrincipal } from './principal-normalizer';
import { hostRequestOf } from '../http/mcp-express-fast-path';

/** Name of the Passport strategy that guards a mount. */
export function mcpStrategyName(mount: string): string {
  return `mcp-bearer:${mount}`;
}

/**
 * The token of an `Authorization: Bearer <token>` header, or null. One token, one scheme: a
 * header with a second word, a comma or another scheme carries no token.
 */
export function bearerTokenOf(header: string | undefined): string | null {
  const match = header === undefined ? null : /^Bearer +([^\s,]+) *$/i.exec(header);
  return match ? match[1] : null;
}

/**
 * What the strategy decided about one request: the principal it lets through, or the challenge
 * it refuses with (`Bearer`, or `TOKEN_REJECTED` for a token the authorizer rejected).
 */
export type McpBearerVerdict =
  { principal: McpPrincipal; challenge?: undefined } | { principal: false; challenge: string };

/** The verdict callbacks Passport attaches to a strategy for the duration of one `authenticate`. */
interface PassportVerdicts {
  success(user: unknown): void;
  fail(challenge: string, status: number): void;
  error(error: unknown): void;
}

const CHALLENGE = 'Bearer';

/** The failure a strategy reports for a token the authorizer rejected (not for a missing one). */
export const TOKEN_REJECTED = 'Bearer error="invalid_token"';

const ANONYMOUS_VERDICT: McpBearerVerdict = Object.freeze({ principal: MCP_ANONYMOUS_PRINCIPAL });
const MISSING_VERDICT: McpBearerVerdict = Object.freeze({ principal: false as const, challenge: CHALLENGE });

/** The verdict of the authorizer's answer: its principal, or a rejected token. */
function verdictOfAnswer(answer: McpAuthResult): McpBearerVerdict {
  const principal = normalizePrincipal(answer);
  return principal ? { principal } : { principal: false, challenge: TOKEN_REJECTED };
}

function isThenable(value: unknown): value is PromiseLike<McpAuthResult> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** How many `Authorization` lines the request carried (Node keeps only the first in `headers`). */
function authorizationLines(req: Request): number {
  let count = 0;
  // Express's request is Node's; a Fastify request keeps Node's under `raw`.
  const raw = req.rawHeaders ?? (req as { raw?: { rawHeaders?: string[] } }).raw?.rawHeaders ?? [];
  // The length test first: only a name of 13 characters is lower-cased (no string per header).
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length === 13 && name.toLowerCase() === 'authorization') count++;
  }
  return count;
}

/** What the mount's guard uses of its bearer strategy. */
export interface McpBearerStrategyLike {
  /**
   * The strategy's decision about one request (see `authenticate`): a value when the authorizer
   * answered synchronously, a promise when it answered with one. Throws (or rejects) when the
   * authorizer throws.
   */
  verdictOf(req: Request): McpBearerVerdict | Promise<McpBearerVerdict>;
}

/**
 * Creates the Passport bearer strategy of one mount. It hands the token to the configured
 * authorizer (a function, or a class resolved through DI) and normalizes the principal.
 */
export function createMcpBearerStrategy(mount: string): Type<McpBearerStrategyLike> {
  @Injectable()
  class McpBearerStrategy extends PassportStrategy(Strategy, mcpStrategyName(mount)) implements OnModuleInit {
    private authorize: McpAuthorizeFn;

    constructor(
      @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
      private readonly moduleRef: ModuleRef,
    ) {
      super({ passReqToCallback: true });
    }

    /** Resolves a class authorizer at boot, so a missing dependency fails the app, not a request. */
    async onModuleInit(): Promise<void> {
      const auth = this.options.auth;
      if (!isAuthorizerClass(auth)) {
        this.authorize = auth;
        return;
      }
      let instance: McpAuthorizer;
      try {
        instance = this.moduleRef.get(auth, { strict: false });
      } catch {
        instance = await this.moduleRef.create(auth);
      }
      this.authorize = (token, request) => instance.authorize(token, request);
    }

    /**
     * Reads the token from the `Authorization` header only. passport-http-bearer also takes an
     * `access_token` from the query string and the body; a token in a URL ends up in access
     * logs and proxies, and MCP authorization forbids it, so those places are never looked at.
     * Two `Authorization` lines are refused too: which one counts would depend on the proxy.
     * With `anonymous`, a request without any `Authorization` line is the anonymous principal;
     * one with a header that carries no usable token is refused as before.
     */
    override authenticate(req: Request): void {
      const verdicts = this as unknown as PassportVerdicts;
      Promise.resolve()
        .then(() => this.verdictOf(req))
        .then(
          (verdict) =>
            verdict.principal ? verdicts.success(verdict.principal) : verdicts.fail(verdict.challenge, 401),
          (error: unknown) => verdicts.error(error),
        );
    }

    /**
     * The decision `authenticate` reports to Passport, as a value: the mount's guard asks for it
     * directly, without Passport's per-request middleware (which builds a strategy object and a
     * set of callbacks for every request). An authorizer that answers synchronously gets a
     * verdict without a promise; one that answers with a promise gets a promise. Throws (or
     * rejects) when the authorizer throws.
     */
    verdictOf(req: Request): McpBearerVerdict | Promise<McpBearerVerdict> {
      const lines = authorizationLines(req);
      if (lines === 0 && this.options.anonymous) return ANONYMOUS_VERDICT;
      const token = lines > 1 ? null : bearerTokenOf(req.headers?.authorization);
      if (token === null) return MISSING_VERDICT;
      const answer = this.authorize(token, hostRequestOf(req));
      return isThenable(answer) ? Promise.resolve(answer).then(verdictOfAnswer) : verdictOfAnswer(answer);
    }

    /** Hands the token to the authorizer; a falsy answer refuses it. */
    async validate(request: Request, token: string): Promise<McpPrincipal | false> {
      return normalizePrincipal(await this.authorize(token, request)) ?? false;
    }
  }
  return McpBearerStrategy;
}
