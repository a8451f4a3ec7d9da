import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpResolvedOptions } from '../config/mcp.options';
import { digestParams, RequestStateCodec, type RequestStatePayload } from './request-state-codec';

const SECRET = 'a-shared-secret-of-the-unit-spec';

function codec(options: { [K in keyof McpResolvedOptions]?: unknown } = {}): RequestStateCodec {
  return new RequestStateCodec({
    mount: 'default',
    stateless: { requestStateSecret: SECRET },
    ...options,
  } as unknown as McpResolvedOptions);
}

function configurationError(build: () => unknown): Error {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(McpConfigurationError);
    return error as Error;
  }
  throw new Error('expected a configuration error');
}

const payload: RequestStatePayload = {
  principal: 'alice',
  method: 'tools/call',
  digest: 'd',
  expiresAt: 1_900_000_000_000,
  responses: { a: { ok: true } },
  asked: ['a'],
  methods: { a: 'elicitation/create' },
};

describe('digestParams', () => {
  it('ignores key order at every depth, but not array order', () => {
    expect(digestParams({ a: 1, b: { x: 1, y: [1, 2] } })).toBe(digestParams({ b: { y: [1, 2], x: 1 }, a: 1 }));
    expect(digestParams({ a: [1, 2] })).not.toBe(digestParams({ a: [2, 1] }));
  });

  it('ignores _meta, inputResponses and requestState, and nothing else', () => {
    const base = { name: 'deploy', arguments: { env: 'prod' } };
    expect(digestParams({ ...base, _meta: { progressToken: 1 }, inputResponses: { a: {} }, requestState: 'x.y' })).toBe(
      digestParams(base),
    );
    expect(digestParams({ ...base, extra: 1 })).not.toBe(digestParams(base));
    expect(digestParams({ ...base, arguments: { env: 'dev' } })).not.toBe(digestParams(base));
  });

  it('tells apart values that stringify alike in a naive join', () => {
    expect(digestParams({ a: '1' })).not.toBe(digestParams({ a: 1 }));
    expect(digestParams({ a: null })).not.toBe(digestParams({ a: 'null' }));
    expect(digestParams({ a: [1, 2] })).not.toBe(digestParams({ a: '1,2' }));
    expect(digestParams({ a: { b: 1 } })).not.toBe(digestParams({ a: [1] }));
    expect(digestParams({ a: [[1], 2] })).not.toBe(digestParams({ a: [1, [2]] }));
    expect(digestParams({ a: [1, 2] })).not.toBe(digestParams({ a: [12] }));
    expect(digestParams({ 'a:1': 2 })).not.toBe(digestParams({ a: '1:2' }));
  });

  it('treats missing params as empty params, and an undefined value as null', () => {
    expect(digestParams(undefined)).toBe(digestParams({}));
    expect(digestParams({ a: undefined })).toBe(digestParams({ a: null }));
    expect(digestParams({ a: undefined })).not.toBe(digestParams({}));
  });

  it('is a base64url SHA-256', () => {
    expect(digestParams({})).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('RequestStateCodec seal/open', () => {
  it('round-trips every field, the delivered responses and their methods included', () => {
    expect(codec().open(codec().seal(payload))).toEqual(payload);
  });

  it('refuses a state whose body was altered, even by one character', () => {
    const sealed = codec().seal(payload);
    const [body, mac] = sealed.split('.');
    const forged = Buffer.from(JSON.stringify({ ...payload, principal: 'mallory' }), 'utf8').toString('base64url');
    expect(codec().open(`${forged}.${mac}`)).toBeNull();
    const flipped = (body[0] === 'A' ? 'B' : 'A') + body.slice(1);
    expect(codec().open(`${flipped}.${mac}`)).toBeNull();
  });

  it('refuses a state whose MAC was altered, truncated or extended', () => {
    const sealed = codec().seal(payload);
    const last = sealed.at(-1) === 'A' ? 'B' : 'A';
    expect(codec().open(sealed.slice(0, -1) + last)).toBeNull();
    expect(codec().open(sealed.slice(0, -1))).toBeNull();
    expect(codec().open(`${sealed}A`)).toBeNull();
  });

  it('refuses a state sealed with another secret', () => {
    const other = codec({ stateless: { requestStateSecret: 'another-secret-of-16-bytes-at-least' } });
    expect(codec().open(other.seal(payload))).toBeNull();
  });

  it('refuses strings without exactly one separating dot, or with an empty body', () => {
    const sealed = codec().seal(payload);
    const [, mac] = sealed.split('.');
    expect(codec().open(sealed.replace('.', ''))).toBeNull();
    expect(codec().open(`${sealed}.`)).toBeNull();
    expect(codec().open(`.${mac}`)).toBeNull();
    expect(codec().open('')).toBeNull();
  });

  it('returns null, not a throw, for a correctly signed body that is not JSON', () => {
    const sealer = codec() as unknown as { sign(body: string): string };
    const body = Buffer.from('not json', 'utf8').toString('base64url');
    expect(codec().open(`${body}.${sealer.sign(body)}`)).toBeNull();
  });

  it('binds the MAC to the mount with a separator, so mount and body cannot be shifted into each other', () => {
    const a = codec({ mount: 'ab' }) as unknown as { sign(body: string): string };
    const b = codec({ mount: 'a' }) as unknown as { sign(body: string): string };
    expect(a.sign('cd')).not.toBe(b.sign('bcd'));
  });

  it('accepts a Buffer secret like the same bytes given as a string', () => {
    const fromBuffer = codec({ stateless: { requestStateSecret: Buffer.from(SECRET, 'utf8') } });
    expect(codec().open(fromBuffer.seal(payload))).toEqual(payload);
  });

  it('with no configured secret, seals states only this instance opens', () => {
    const own = codec({ stateless: {} });
    expect(own.open(own.seal(payload))).toEqual(payload);
    expect(codec({ stateless: {} }).open(own.seal(payload))).toBeNull();
  });
});

describe('RequestStateCodec configuration', () => {
  it('expires states after ten minutes by default, or after the configured positive integer', () => {
    expect(codec().ttlMs).toBe(600_000);
    expect(codec({ stateless: { requestStateSecret: SECRET, requestStateTtlMs: 1 } }).ttlMs).toBe(1);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])(
    'refuses requestStateTtlMs %p, naming the mount and the option',
    (ttl) => {
      const error = configurationError(() =>
        codec({ mount: 'billing', stateless: { requestStateSecret: SECRET, requestStateTtlMs: ttl } }),
      );
      expect(error.message).toContain('billing');
      expect(error.message).toContain('requestStateTtlMs must be a positive integer');
    },
  );

  it('refuses a secret shorter than 16 bytes, and takes one of exactly 16', () => {
    const error = configurationError(() =>
      codec({ mount: 'billing', stateless: { requestStateSecret: '123456789012345' } }),
    );
    expect(error.message).toContain('billing');
    expect(error.message).toContain('at least 16 bytes');
    expect(() => codec({ stateless: { requestStateSecret: '1234567890123456' } })).not.toThrow();
  });
});
