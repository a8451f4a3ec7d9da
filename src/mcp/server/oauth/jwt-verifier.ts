import { Inject, Injectable, Logger, Optional, type Type } from '@nestjs/common';
import type { JWTVerifyGetKey } from 'jose';
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
import { loadJose, type JoseModule } from './jose-loader';
import { McpAuthorizationServerError } from './oauth.errors';
import { verifierDefaults, verifierLimits } from './verifier-defaults';

/** Asymmetric JWS algorithms: the only kind a JWKS of public keys can verify. */
const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/** Injection token of `JwtVerifier` settings, for hosts that provide them instead of calling `configure`. */
export const MCP_JWT_VERIFIER_OPTIONS = Symbol('MCP_JWT_VERIFIER_OPTIONS');

/** jose error codes that mean "this token is not acceptable" (401), as opposed to an outage (503). */
const TOKEN_ERROR_CODES = new Set([
  'ERR_JWT_EXPIRED',
  'ERR_JWT_CLAIM_VALIDATION_FAILED',
  'ERR_JWT_INVALID',
  'ERR_JWS_INVALID',
  'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
  'ERR_JOSE_ALG_NOT_ALLOWED',
  'ERR_JOSE_NOT_SUPPORTED',
  'ERR_JWKS_NO_MATCHING_KEY',
  'ERR_JWKS_MULTIPLE_MATCHING_KEYS',
]);

/**
 * Verifies JWT access tokens against the issuer's published keys: signature (asymmetric
 * algorithms only), `iss`, `aud` (the mount's resource, RFC 8707), `exp` and `nbf` with a clock
 * tolerance, optionally `typ`. The JWKS is cached and fetched again when a token names an unknown
 * key (rotation), at most once per cooldown. Claims map to the principal: `sub` the key,
 * `scope`/`scp` the scopes, `rolesClaim` the roles.
 *
 * Use it as a mount's `auth`: `auth: JwtVerifier` (everything from the `oauth` option) or
 * `auth: JwtVerifier.configure({ ... })`. A rejected token is a 401 `invalid_token`; an
 * authorization server that cannot be reached is a 503. Tokens are never logged.
 */
@Injectable()
export class JwtVerifier implements McpAuthorizer {
  private readonly logger = new Logger(JwtVerifier.name);
  private readonly jose: JoseModule;
  private readonly issuer: string;
  private readonly audience: string[];
  private readonly algorithms: string[];
  private readonly keys: OnceWhenDone<JWTVerifyGetKey>;
  private readonly limits: AuthorizationServerLimits;

  /** A `JwtVerifier` class bound to these settings, for `auth:` (resolved through DI like any `auth` class). */
  static configure(options: JwtVerifier.Options): Type<JwtVerifier> {
    @Injectable()
    class ConfiguredJwtVerifier extends JwtVerifier {
      constructor(@Optional() @Inject(MCP_MODULE_OPTIONS) mount?: McpResolvedOptions) {
        super(options, mount);
      }
    }
    return ConfiguredJwtVerifier;
  }

  /** @internal Built by Nest (options from `MCP_JWT_VERIFIER_OPTIONS`) or by `configure`. */
  constructor(
    @Optional() @Inject(MCP_JWT_VERIFIER_OPTIONS) private readonly options: JwtVerifier.Options = {},
    @Optional() @Inject(MCP_MODULE_OPTIONS) mount?: McpResolvedOptions,
  ) {
    const defaults = verifierDefaults('JwtVerifier', this.options, mount);
    this.issuer = defaults.issuer;
    this.audience = defaults.audience;
    this.algorithms = this.options.algorithms ?? ASYMMETRIC_ALGORITHMS;
    const refused = this.algorithms.filter((alg) => !ASYMMETRIC_ALGORITHMS.includes(alg));
    if (this.algorithms.length === 0 || refused.length > 0) {
      throw new McpConfigurationError(
        `JwtVerifier: algorithms ${JSON.stringify(refused)} are not accepted; use asymmetric ones (${ASYMMETRIC_ALGORITHMS.join(', ')}). ` +
          `"none" and HMAC algorithms cannot be verified with a JWKS of public keys.`,
      );
    }
    const tolerance = this.options.clockToleranceSec;
    if (tolerance !== undefined && (!Number.isFinite(tolerance) || tolerance < 0)) {
      throw new McpConfigurationError('JwtVerifier: clockToleranceSec must be a non-negative number of seconds');
    }
    this.limits = verifierLimits('JwtVerifier', this.options);
    this.jose = loadJose('JwtVerifier');
    this.keys = new OnceWhenDone(() => this.remoteKeys());
  }

  /** Verifies the token and maps its claims, or returns null for a token that is not acceptable. */
  async authorize(token: string): Promise<McpAuthResult> {
    const keys = await this.keys.get();
    try {
      const { payload } = await this.jose.jwtVerify(token, keys, {
        issuer: this.issuer,
        audience: this.audience,
        algorithms: this.algorithms,
        clockTolerance: this.options.clockToleranceSec ?? 30,
        typ: this.options.typ,
      });
      return principalFromClaims(payload, this.options);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== undefined && TOKEN_ERROR_CODES.has(code)) {
        this.logger.debug(`Token refused: ${code}`);
        return null;
      }
      throw new McpAuthorizationServerError(
        `JwtVerifier could not verify a token against the keys of ${this.issuer}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  private async remoteKeys(): Promise<JWTVerifyGetKey> {
    let jwksUri = this.options.jwksUri;
    if (!jwksUri) {
      const metadata = await discoverAuthorizationServer(this.issuer, this.limits);
      if (typeof metadata.jwks_uri !== 'string')
        throw new McpAuthorizationServerError(`The metadata of ${this.issuer} has no jwks_uri`);
      jwksUri = metadata.jwks_uri;
    }
    return this.jose.createRemoteJWKSet(new URL(jwksUri), {
      timeoutDuration: this.limits.timeoutMs,
      cooldownDuration: this.options.jwksCooldownMs ?? 30_000,
      cacheMaxAge: this.options.jwksCacheMaxAgeMs ?? 600_000,
      [this.jose.customFetch]: (url: string, init: RequestInit) => this.fetchJwks(url, init),
    });
  }

  /**
   * jose's JWKS request, read within the verifier's bounds: a redirect, a body too large or too
   * slow fails as `McpAuthorizationServerError` (a 503) before jose parses anything.
   */
  private async fetchJwks(url: string, init: RequestInit): Promise<Response> {
    const { status, body } = await fetchJson(url, { method: init.method, headers: init.headers }, this.limits);
    // No body at all when there was none to parse: a 204 or 304 may not carry one.
    return new Response(body === undefined ? null : JSON.stringify(body), {
      status,
      headers: { 'Content-Type': 'application/json' },
    });
  }
}

/** What `JwtVerifier` is configured with: `JwtVerifier.Options`. */
export declare namespace JwtVerifier {
  /** Settings of `JwtVerifier`; each has a default taken from the mount's `oauth` option. */
  export interface Options extends McpClaimMapping {
    /**
     * The issuer tokens must name (`iss`), whose metadata gives the JWKS.
     * @default the mount's `oauth.authorizationServers` entry (when it lists exactly one)
     */
    issuer?: string;
    /**
     * The audience tokens must name (`aud`), RFC 8707: the resource they were issued for.
     * @default the mount's `oauth` resource
     */
    audience?: string;
    /**
     * Where the signing keys are published.
     * @default the `jwks_uri` of the issuer's metadata (RFC 8414, or OpenID Connect discovery)
     */
    jwksUri?: string;
    /**
     * Accepted signature algorithms. `none` and the HMAC ones (`HS256`...) are refused: a JWKS holds
     * public keys, and a token "signed" with one of them as an HMAC secret must not verify.
     * @default ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']
     */
    algorithms?: string[];
    /**
     * Tolerated clock difference for `exp`, `nbf` and `iat`, in seconds.
     * @default 30
     */
    clockToleranceSec?: number;
    /**
     * The required `typ` header, e.g. `at+jwt` (RFC 9068 access tokens).
     * @default not checked
     */
    typ?: string;
    /**
     * After a token names a key the cached JWKS lacks, the JWKS is fetched again (key rotation),
     * but not more often than this.
     * @default 30_000
     */
    jwksCooldownMs?: number;
    /**
     * How long a fetched JWKS is used before it is fetched again.
     * @default 600_000
     */
    jwksCacheMaxAgeMs?: number;
    /**
     * Deadline of each request to the authorization server (metadata, JWKS), body included.
     * @default 5000
     */
    timeoutMs?: number;
    /**
     * Largest body read from the authorization server (metadata, JWKS), in bytes: a larger
     * one fails the request (a 503 for the caller), the rest unread.
     * @default 1_048_576
     */
    maxResponseBytes?: number;
  }
}
