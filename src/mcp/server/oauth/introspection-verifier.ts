import { Inject, Injectable, Logger, Optional, type Type } from '@nestjs/common';
import type { McpAuthorizer, McpAuthResult } from '../../interfaces/principal.interface';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../config/mcp.options';
import {
  discoverAuthorizationServer,
  fetchJson,
  OnceWhenDone,
  type AuthorizationServerLimits,
} from './authorization-server-metadata';
import { principalFromClaims, type McpClaimMapping } from './claims-principal';
import { McpAuthorizationServerError } from './oauth.errors';
import { TokenAnswerCache, tokenDigest } from './token-answer-cache';
import { verifierDefaults, verifierLimits } from './verifier-defaults';

/** Injection token of `IntrospectionVerifier` settings, for hosts that provide them instead of calling `configure`. */
export const MCP_INTROSPECTION_VERIFIER_OPTIONS = Symbol('MCP_INTROSPECTION_VERIFIER_OPTIONS');

/** `application/x-www-form-urlencoded` encoding of a client credential, as `client_secret_basic` requires (RFC 6749 section 2.3.1). */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}

function audiences(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/**
 * Asks the authorization server about each token (OAuth 2.0 Token Introspection, RFC 7662),
 * authenticating with `client_secret_basic`. A token is accepted when the answer is `active`,
 * names this resource in `aud` (RFC 8707), is within `exp`/`nbf` and, when it has one, names the
 * issuer in `iss`. Active answers are cached (keyed by a SHA-256 of the token, never the token)
 * until the token expires or `cacheTtlMs` passes, whichever comes first; refusals for
 * `inactiveCacheTtlMs`, in a cache of their own. Concurrent lookups of one token share one
 * introspection.
 *
 * Use it as a mount's `auth`: `auth: IntrospectionVerifier.configure({ clientId, clientSecret })`.
 */
@Injectable()
export class IntrospectionVerifier implements McpAuthorizer {
  private readonly logger = new Logger(IntrospectionVerifier.name);
  private readonly issuer: string;
  private readonly audience: string[];
  private readonly endpoint: OnceWhenDone<string>;
  private readonly limits: AuthorizationServerLimits;
  private readonly active: TokenAnswerCache<McpAuthResult>;
  private readonly refused: TokenAnswerCache<true>;
  /** Introspections under way, by token digest: a burst of requests with one token makes one call. */
  private readonly inflight = new Map<string, Promise<Record<string, unknown>>>();

  /** An `IntrospectionVerifier` class bound to these settings, for `auth:` (resolved through DI). */
  static configure(options: IntrospectionVerifier.Options): Type<IntrospectionVerifier> {
    @Injectable()
    class ConfiguredIntrospectionVerifier extends IntrospectionVerifier {
      constructor(@Optional() @Inject(MCP_MODULE_OPTIONS) mount?: McpResolvedOptions) {
        super(options, mount);
      }
    }
    return ConfiguredIntrospectionVerifier;
  }

  /** @internal Built by Nest (options from `MCP_INTROSPECTION_VERIFIER_OPTIONS`) or by `configure`. */
  constructor(
    @Optional() @Inject(MCP_INTROSPECTION_VERIFIER_OPTIONS) private readonly options: IntrospectionVerifier.Options,
    @Optional() @Inject(MCP_MODULE_OPTIONS) mount?: McpResolvedOptions,
  ) {
    if (
      !options ||
      typeof options.clientId !== 'string' ||
      !options.clientId ||
      typeof options.clientSecret !== 'string' ||
      !options.clientSecret
    ) {
      throw new McpConfigurationError(
        'IntrospectionVerifier needs clientId and clientSecret: IntrospectionVerifier.configure({ clientId, clientSecret })',
      );
    }
    const defaults = verifierDefaults('IntrospectionVerifier', options, mount);
    this.issuer = defaults.issuer;
    this.active = new TokenAnswerCache(options.cacheMaxEntries ?? 10_000);
    this.refused = new TokenAnswerCache(options.inactiveCacheMaxEntries ?? 10_000);
    this.audience = defaults.audience;
    this.limits = verifierLimits('IntrospectionVerifier', options);
    this.endpoint = new OnceWhenDone(async () => {
      if (options.endpoint) return options.endpoint;
      const metadata = await discoverAuthorizationServer(this.issuer, this.limits);
      if (typeof metadata.introspection_endpoint !== 'string')
        throw new McpAuthorizationServerError(`The metadata of ${this.issuer} has no introspection_endpoint`);
      return metadata.introspection_endpoint;
    });
  }

  /** Introspects the token (or reuses a cached answer) and maps the answer to a principal. */
  async authorize(token: string): Promise<McpAuthResult> {
    const key = tokenDigest(token);
    const now = Date.now();
    const cached = this.active.get(key, now);
    if (cached) return cached;
    if (this.refused.get(key, now)) return null;
    const answer = await this.lookUp(key, token);
    const refusal = this.refusal(answer, now);
    if (refusal) {
      this.logger.debug(`Token refused: ${refusal}`);
      // A token not valid yet may become valid within the period: it is asked about again.
      const refusedTtl = this.options.inactiveCacheTtlMs ?? 10_000;
      if (refusal !== 'not yet valid' && refusedTtl > 0) this.refused.set(key, true, now + refusedTtl);
      return null;
    }
    const result = principalFromClaims(answer, this.options);
    const ttl = this.options.cacheTtlMs ?? 60_000;
    const until = Math.min(now + ttl, typeof answer.exp === 'number' ? answer.exp * 1000 : Infinity);
    if (ttl > 0 && until > now) this.active.set(key, result, until);
    return result;
  }

  /** The introspection answer for a token, shared with the lookups of the same token under way. */
  private lookUp(key: string, token: string): Promise<Record<string, unknown>> {
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.introspect(token).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }

  private async introspect(token: string): Promise<Record<string, unknown>> {
    const endpoint = await this.endpoint.get();
    const credentials = Buffer.from(
      `${formEncode(this.options.clientId)}:${formEncode(this.options.clientSecret)}`,
    ).toString('base64');
    const { status, body } = await fetchJson(
      endpoint,
      {
        method: 'POST',
        headers: {
          Authorization: `Basic ${credentials}`,
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'application/json',
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
      },
      this.limits,
    );
    // A token the server will not introspect (oidc-provider: a structured JWT) is not an active one.
    const error = (body as { error?: unknown } | undefined)?.error;
    if (status === 400 && (error === 'unsupported_token_type' || error === 'invalid_token')) return { active: false };
    if (status !== 200 || typeof body !== 'object' || body === null) {
      throw new McpAuthorizationServerError(
        `The introspection endpoint ${endpoint} answered HTTP ${status}${status === 401 ? ' (check clientId and clientSecret)' : ''}`,
      );
    }
    return body as Record<string, unknown>;
  }

  /** Why an introspection answer does not let the token in, or undefined when it does. */
  private refusal(answer: Record<string, unknown>, now: number): string | undefined {
    if (answer.active !== true) return 'inactive';
    const skewMs = (this.options.clockToleranceSec ?? 30) * 1000;
    if (typeof answer.exp === 'number' && answer.exp * 1000 + skewMs <= now) return 'expired';
    if (typeof answer.nbf === 'number' && answer.nbf * 1000 - skewMs > now) return 'not yet valid';
    if (answer.iss !== undefined && answer.iss !== this.issuer) return 'another issuer';
    if (!audiences(answer.aud).some((aud) => this.audience.includes(aud))) return 'another audience';
    return undefined;
  }
}

/** What `IntrospectionVerifier` is configured with: `IntrospectionVerifier.Options`. */
export declare namespace IntrospectionVerifier {
  /** Settings of `IntrospectionVerifier`. */
  export interface Options extends McpClaimMapping {
    /** This resource server's client id at the authorization server (sent with `client_secret_basic`). */
    clientId: string;
    /** Its client secret. */
    clientSecret: string;
    /**
     * The introspection endpoint.
     * @default the `introspection_endpoint` of the issuer's metadata
     */
    endpoint?: string;
    /**
     * The authorization server; its metadata gives the endpoint, and an `iss` in an answer must match it.
     * @default the mount's `oauth.authorizationServers` entry (when it lists exactly one)
     */
    issuer?: string;
    /**
     * The audience an active token must name (`aud`): the resource it was issued for.
     * @default the mount's `oauth` resource
     */
    audience?: string;
    /**
     * How long an active answer is reused; never past the token's `exp`. 0 asks every time.
     * @default 60_000
     */
    cacheTtlMs?: number;
    /**
     * Most active answers kept; the oldest go first.
     * @default 10_000
     */
    cacheMaxEntries?: number;
    /**
     * How long a refusal (an inactive or unknown token, one that expired, or one for another
     * audience or issuer) is reused, so that a client sending the same bad token again and again
     * costs one introspection per this period. 0 asks every time.
     * @default 10_000
     */
    inactiveCacheTtlMs?: number;
    /**
     * Most refusals kept; the oldest go first. They are kept apart from the active answers, so a
     * flood of random tokens cannot push those out.
     * @default 10_000
     */
    inactiveCacheMaxEntries?: number;
    /**
     * Tolerated clock difference for `exp` and `nbf`, in seconds.
     * @default 30
     */
    clockToleranceSec?: number;
    /**
     * Deadline of each request to the authorization server (metadata, introspection), body included.
     * @default 5000
     */
    timeoutMs?: number;
    /**
     * Largest body read from the authorization server (metadata, introspection answers), in bytes: a larger
     * one fails the request (a 503 for the caller), the rest unread.
     * @default 1_048_576
     */
    maxResponseBytes?: number;
  }
}
