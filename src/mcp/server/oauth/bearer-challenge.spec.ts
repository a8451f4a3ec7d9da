import { UnauthorizedException } from '@nestjs/common';
import {
  challengeOf,
  insufficientScopeChallenge,
  McpBearerChallengeException,
  McpInsufficientScopeException,
  refusedRequestId,
  unauthorizedChallenge,
} from './bearer-challenge';
import { resolveOAuthOptions } from '../config/mcp-oauth.options';

const oauth = resolveOAuthOptions('m', '/mcp', {
  publicUrl: 'https://mcp.example.com',
  authorizationServers: ['https://auth.example.com'],
  requiredScopes: ['read', 'write'],
})!;
const noScopes = resolveOAuthOptions('m', '/mcp', {
  publicUrl: 'https://mcp.example.com',
  authorizationServers: ['https://auth.example.com'],
})!;
const METADATA = 'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"';

describe('bearer challenges', () => {
  it('stay the bare Bearer without oauth', () => {
    expect(unauthorizedChallenge(undefined, 'missing')).toBe('Bearer');
    expect(unauthorizedChallenge(undefined, 'invalid')).toBe('Bearer');
  });

  it('name the metadata and the scopes for a missing token, with no error', () => {
    expect(unauthorizedChallenge(oauth, 'missing')).toBe(`Bearer ${METADATA}, scope="read write"`);
    expect(unauthorizedChallenge(noScopes, 'missing')).toBe(`Bearer ${METADATA}`);
  });

  it('add invalid_token for a rejected token', () => {
    expect(unauthorizedChallenge(oauth, 'invalid')).toMatch(
      /^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="[^"]+", scope="read write"$/,
    );
  });

  it('say insufficient_scope with the needed scopes for a 403', () => {
    expect(insufficientScopeChallenge(oauth, ['read', 'write'])).toBe(
      `Bearer error="insufficient_scope", scope="read write", ${METADATA}`,
    );
    expect(insufficientScopeChallenge(undefined, ['admin'])).toBe('Bearer error="insufficient_scope", scope="admin"');
  });

  it('travel on the exceptions the filter reads', () => {
    expect(challengeOf(new McpBearerChallengeException('Bearer x="1"'))).toBe('Bearer x="1"');
    expect(challengeOf(new McpInsufficientScopeException('Bearer y="2"', ['a']))).toBe('Bearer y="2"');
    expect(new McpInsufficientScopeException('c', ['a', 'b']).message).toBe(
      'Insufficient scope: this request needs the scopes a b',
    );
    expect(challengeOf(new UnauthorizedException())).toBe('Bearer');
    expect(challengeOf(new Error('other'))).toBeUndefined();
  });
});

describe('refusedRequestId', () => {
  it('is the id the guard found for a scope refusal, null otherwise', () => {
    expect(refusedRequestId(new McpInsufficientScopeException('c', ['a'], 7))).toBe(7);
    expect(refusedRequestId(new McpInsufficientScopeException('c', ['a']))).toBeNull();
    expect(refusedRequestId(new UnauthorizedException())).toBeNull();
  });
});
