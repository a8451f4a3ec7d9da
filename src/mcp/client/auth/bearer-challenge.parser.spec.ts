import { performance } from 'node:perf_hooks';
import { MAX_CHALLENGE_CHARS, parseBearerChallenge } from './bearer-challenge.parser';

describe('parseBearerChallenge', () => {
  it('reads error, scope and resource_metadata, quoted or not', () => {
    expect(
      parseBearerChallenge(
        403,
        'Bearer error="insufficient_scope", scope="mcp:tools mcp:admin", resource_metadata="https://a.example/.well-known/oauth-protected-resource/mcp"',
      ),
    ).toEqual({
      status: 403,
      error: 'insufficient_scope',
      scope: 'mcp:tools mcp:admin',
      resourceMetadata: 'https://a.example/.well-known/oauth-protected-resource/mcp',
    });
    expect(parseBearerChallenge(401, 'Basic realm="x", Bearer error=invalid_token')).toMatchObject({
      error: 'invalid_token',
      scope: null,
    });
  });

  it('gives nulls without a Bearer challenge', () => {
    expect(parseBearerChallenge(401, null)).toEqual({ status: 401, error: null, scope: null, resourceMetadata: null });
    expect(parseBearerChallenge(401, 'Basic realm="x"')).toMatchObject({ error: null });
  });

  it('reads escapes in quoted values, and stops at the next challenge', () => {
    expect(
      parseBearerChallenge(401, 'Bearer realm="a \\"b\\"", scope="x:y", DPoP algs="ES256", error="other"'),
    ).toEqual({ status: 401, error: null, scope: 'x:y', resourceMetadata: null });
    expect(parseBearerChallenge(401, 'Bearer abc123, error="not-bearer"')).toMatchObject({ error: null });
    expect(parseBearerChallenge(401, 'bearer   error = "invalid_token" , scope=a')).toMatchObject({
      error: 'invalid_token',
      scope: 'a',
    });
  });

  // A 16 KB header of one long name without "=" took 0.6 s in a quadratic parser; linear, it is
  // microseconds. The bounds are generous correctness bounds, far from either.
  it('reads a hostile header in linear time, and ignores one over the cap', () => {
    const hostile = (length: number) => `Bearer ${'a'.repeat(length)}`;
    const time = (header: string) => {
      const start = performance.now();
      parseBearerChallenge(401, header);
      return performance.now() - start;
    };
    expect(time(hostile(MAX_CHALLENGE_CHARS - 10))).toBeLessThan(50);
    expect(time(`Bearer ${'a,'.repeat(MAX_CHALLENGE_CHARS / 2 - 10)}`)).toBeLessThan(50);
    expect(time(`Bearer ${'a="'.repeat(MAX_CHALLENGE_CHARS / 3 - 10)}`)).toBeLessThan(50);
    expect(time(hostile(16 * 1024))).toBeLessThan(100);
    expect(parseBearerChallenge(401, `Bearer error="invalid_token", x="${'a'.repeat(MAX_CHALLENGE_CHARS)}"`)).toEqual({
      status: 401,
      error: null,
      scope: null,
      resourceMetadata: null,
    });
  });
});
