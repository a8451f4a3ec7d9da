import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpResolvedOptions } from '../config/mcp.options';
import { RequestStateCodec, type RequestStatePayload } from './request-state-codec';

const SECRET = 'a-shared-secret-of-the-unit-spec';

function codec(options: { [K in keyof McpResolvedOptions]?: unknown }): RequestStateCodec {
  return new RequestStateCodec({ mount: 'default', ...options } as unknown as McpResolvedOptions);
}

const payload: RequestStatePayload = {
  principal: 'alice',
  method: 'tools/call',
  digest: 'd',
  expiresAt: Date.now() + 60_000,
  responses: {},
  asked: ['a'],
};

describe('RequestStateCodec', () => {
  it('refuses to boot with redis and no shared secret, and says how to fix it', () => {
    let thrown: unknown;
    try {
      codec({ redis: 'redis://127.0.0.1:6379' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(McpConfigurationError);
    expect((thrown as Error).message).toContain('stateless: { requestStateSecret:');
    expect((thrown as Error).message).toContain('redis is set');
  });

  it('boots with redis and a shared secret; without redis a per-process secret is fine', () => {
    expect(() => codec({ redis: 'redis://127.0.0.1:6379', stateless: { requestStateSecret: SECRET } })).not.toThrow();
    expect(() => codec({})).not.toThrow();
  });

  it('opens a state sealed by another instance with the same secret on the same mount', () => {
    const sealed = codec({ stateless: { requestStateSecret: SECRET } }).seal(payload);
    expect(codec({ stateless: { requestStateSecret: SECRET } }).open(sealed)).toEqual(payload);
  });

  it('refuses on mount B a state sealed on mount A, even with the same secret', () => {
    const sealed = codec({ mount: 'a', stateless: { requestStateSecret: SECRET } }).seal(payload);
    expect(codec({ mount: 'b', stateless: { requestStateSecret: SECRET } }).open(sealed)).toBeNull();
    expect(codec({ mount: 'a', stateless: { requestStateSecret: SECRET } }).open(sealed)).toEqual(payload);
  });
});
