import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import {
  ephemeralRequestStateSecretMessage,
  invalidRequestStateSecretMessage,
  missingSharedRequestStateSecretMessage,
} from '../../mcp.messages';
import type { McpResolvedOptions } from '../config/mcp.options';

/** How long an `input_required` round may take before its `requestState` expires, by default. */
const DEFAULT_REQUEST_STATE_TTL_MS = 600_000;

/** What a `requestState` carries between two rounds of one request. */
export interface RequestStatePayload {
  /** Key of the principal the state was issued to. */
  principal: string;
  /** The method of the originating request. */
  method: string;
  /** Digest of the request's salient params (everything but `_meta` and the retry fields). */
  digest: string;
  /** Expiry, in ms since the epoch. */
  expiresAt: number;
  /** The input responses collected so far, by key. */
  responses: Record<string, Record<string, unknown>>;
  /** The keys of the input requests the last round asked for. */
  asked: string[];
  /** The method of each asked key (states sealed without it hold automatic keys only). */
  methods?: Record<string, string>;
  /** The values the handler kept for the next round (`McpToolContext.round`), by name. */
  kept?: Record<string, string>;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Digest of the params that identify a request across its rounds (key order does not matter). */
export function digestParams(params: Record<string, unknown> | undefined): string {
  const { _meta: _m, inputResponses: _i, requestState: _s, ...salient } = params ?? {};
  return createHash('sha256').update(canonical(salient)).digest('base64url');
}

/**
 * Seals and opens the `requestState` of multi round-trip requests: base64url JSON plus an
 * HMAC-SHA256 over it, so a client can carry the state but not forge or alter it. Any replica
 * holding the same secret can open what another sealed. The MAC also covers the mount name, so
 * two mounts sharing a secret cannot replay each other's states.
 */
@Injectable()
export class RequestStateCodec {
  private readonly logger = new Logger(RequestStateCodec.name);
  private readonly secret: Buffer;
  private readonly mount: string;
  /** Lifetime of a sealed state, in ms. */
  readonly ttlMs: number;

  constructor(@Inject(MCP_MODULE_OPTIONS) options: McpResolvedOptions) {
    const configured = options.stateless?.requestStateSecret;
    this.mount = options.mount;
    this.ttlMs = options.stateless?.requestStateTtlMs ?? DEFAULT_REQUEST_STATE_TTL_MS;
    if (!Number.isInteger(this.ttlMs) || this.ttlMs <= 0) {
      throw new McpConfigurationError(
        invalidRequestStateSecretMessage(options.mount, 'stateless.requestStateTtlMs must be a positive integer'),
      );
    }
    if (configured === undefined) {
      // A per-process secret cannot open what another replica sealed: with pub/sub the app runs
      // several replicas, and every multi round-trip retry that lands elsewhere would fail.
      if (options.redis) throw new McpConfigurationError(missingSharedRequestStateSecretMessage(options.mount));
      this.secret = randomBytes(32);
      this.logger.log(ephemeralRequestStateSecretMessage(options.mount));
      return;
    }
    this.secret = typeof configured === 'string' ? Buffer.from(configured, 'utf8') : Buffer.from(configured);
    if (this.secret.length < 16) {
      throw new McpConfigurationError(
        invalidRequestStateSecretMessage(options.mount, 'stateless.requestStateSecret must be at least 16 bytes'),
      );
    }
  }

  /** Seals a payload into an opaque string. */
  seal(payload: RequestStatePayload): string {
    const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  /** Opens a sealed string; null when it was altered, forged or is not one of ours. */
  open(sealed: string): RequestStatePayload | null {
    const dot = sealed.indexOf('.');
    if (dot <= 0 || dot !== sealed.lastIndexOf('.')) return null;
    const body = sealed.slice(0, dot);
    const given = Buffer.from(sealed.slice(dot + 1), 'utf8');
    const expected = Buffer.from(this.sign(body), 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    try {
      return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as RequestStatePayload;
    } catch {
      return null;
    }
  }

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(this.mount).update('\u0000').update(body).digest('base64url');
  }
}
