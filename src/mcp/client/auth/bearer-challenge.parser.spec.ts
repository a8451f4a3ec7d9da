import { parseBearerChallenge } from './bearer-challenge.parser';

describe('parseBearerChallenge', () => {
  it('reads error, scope and resource_metadata, quoted or not', () => {
    expect(parseBearerChallenge(403, 'Bearer error="insufficient_scope", scope="mcp:tools mcp:admin", resource_metadata="https://a.example/.well-known/oauth-protected-resource/mcp"')).toEqual({
      status: 403,
      error: 'insufficient_scope',
      scope: 'mcp:tools mcp:admin',
      resourceMetadata: 'https://a.example/.well-known/oauth-protected-resource/mcp',
    });
    expect(parseBearerChallenge(401, 'Basic realm="x", Bearer error=invalid_token')).toMatchObject({ error: 'invalid_token', scope: null });
  });

  it('gives nulls without a Bearer challenge', () => {
    expect(parseBearerChallenge(401, null)).toEqual({ status: 401, error: null, scope: null, resourceMetadata: null });
    expect(parseBearerChallenge(401, 'Basic realm="x"')).toMatchObject({ error: null });
  });
});
