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

  // A header of one long name without "=" near the 8 KiB cap cost a quadratic parser ~0.15 s a
  // parse (0.6 s at 16 KB); a linear one takes well under a millisecond. Twenty parses of each
  // hostile shape: about 3 s when quadratic, a few ms when linear. The bound sits far from both,
  // so a loaded machine cannot cross it, and a quadratic parser still does.
  it('reads a hostile header in linear time, and ignores one over the cap', () => {
    const hostile = (length: number) => `Bearer ${'a'.repeat(length)}`;
    const twentyParses = (header: string) => {
      const start = performance.now();
      for (let i = 0; i < 20; i++) parseBearerChallenge(401, header);
      return performance.now() - start;
    };
    expect(twentyParses(hostile(MAX_CHALLENGE_CHARS - 10))).toBeLessThan(1000);
    expect(twentyParses(`Bearer ${'a,'.repeat(MAX_CHALLENGE_CHARS / 2 - 10)}`)).toBeLessThan(1000);
    expect(twentyParses(`Bearer ${'a="'.repeat(MAX_CHALLENGE_CHARS / 3 - 10)}`)).toBeLessThan(1000);
    expect(twentyParses(hostile(16 * 1024))).toBeLessThan(1000);
    expect(parseBearerChallenge(401, `Bearer error="invalid_token", x="${'a'.repeat(MAX_CHALLENGE_CHARS)}"`)).toEqual({
      status: 401,
      error: null,
      scope: null,
      resourceMetadata: null,
    });
  });
});
