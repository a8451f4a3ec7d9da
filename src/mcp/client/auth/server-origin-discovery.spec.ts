import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpOAuthClientError, McpUntrustedAuthorizationServerError } from './oauth-client.errors';
import { discoverOAuth } from './oauth-discovery';
import type { OAuthDiscoveryPolicy } from './oauth-metadata';

/**
 * The 2025-03-26 discovery (no Protected Resource Metadata) through `discoverOAuth`, against a
 * real loopback server that serves no PRM and, as each test sets it, RFC 8414 metadata at its
 * origin or nothing at all.
 */
describe('discoverOAuth of a server without Protected Resource Metadata (2025-03-26)', () => {
  let server: Server;
  let origin: string;
  let endpoint: URL;
  /** What the origin's well-known authorization server metadata answers; null: 404. */
  let metadata: { status: number; body: unknown } | null;
  /** The status of the Protected Resource Metadata URLs. */
  let prmStatus: number;
  /** The WWW-Authenticate of the 401 a tokenless POST gets. */
  let challenge: string;
  let metadataHeaders: IncomingHttpHeaders | null;

  const policy = (trusted: string[], tokenEndpoint?: string): OAuthDiscoveryPolicy => ({
    timeoutMs: 5_000,
    maxBytes: 65_536,
    trustedIssuers: trusted,
    ...(tokenEndpoint ? { tokenEndpoint } : {}),
  });

  beforeAll(async () => {
    server = createServer((req, res) => {
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
      if (req.url?.startsWith('/.well-known/oauth-protected-resource')) return json(prmStatus, {});
      if (req.url === '/.well-known/oauth-authorization-server') {
        metadataHeaders = req.headers;
        return metadata ? json(metadata.status, metadata.body) : json(404, {});
      }
      if (req.method === 'POST' && req.url === '/mcp') {
        res.writeHead(401, { 'WWW-Authenticate': challenge }).end();
        return;
      }
      json(404, {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    endpoint = new URL(`${origin}/mcp`);
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  beforeEach(() => {
    metadata = null;
    prmStatus = 404;
    challenge = 'Bearer';
    metadataHeaders = null;
  });

  it('uses the default endpoints at the origin when it serves no metadata either', async () => {
    const found = await discoverOAuth(endpoint, null, policy([origin]));
    expect(found).toEqual({
      resource: `${origin}/mcp`,
      issuer: origin,
      tokenEndpoint: `${origin}/token`,
      authMethods: [],
      user: expect.objectContaining({
        authorizationEndpoint: `${origin}/authorize`,
        registrationEndpoint: `${origin}/register`,
        pkceMethods: ['S256'],
      }),
    });
  });

  it('reads the RFC 8414 metadata at the origin, with the MCP-Protocol-Version header, and uses its endpoints', async () => {
    metadata = {
      status: 200,
      body: {
        issuer: `${origin}/oauth`,
        authorization_endpoint: `${origin}/oauth/authorize`,
        token_endpoint: `${origin}/oauth/token`,
        registration_endpoint: `${origin}/oauth/register`,
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_post'],
      },
    };
    const found = await discoverOAuth(endpoint, null, policy([`${origin}/`]));
    expect(metadataHeaders?.['mcp-protocol-version']).toBe('2025-03-26');
    expect(found).toMatchObject({
      resource: `${origin}/mcp`,
      issuer: `${origin}/oauth`,
      tokenEndpoint: `${origin}/oauth/token`,
      authMethods: ['client_secret_post'],
      user: { authorizationEndpoint: `${origin}/oauth/authorize`, registrationEndpoint: `${origin}/oauth/register` },
    });
  });

  it('sends no user and registers nowhere off the origin its metadata names', async () => {
    metadata = {
      status: 200,
      body: {
        issuer: origin,
        authorization_endpoint: 'https://elsewhere.example.com/authorize',
        token_endpoint: `${origin}/token`,
        registration_endpoint: 'https://elsewhere.example.com/register',
      },
    };
    const found = await discoverOAuth(endpoint, null, policy([origin]));
    expect(found.user).toMatchObject({ authorizationEndpoint: null, registrationEndpoint: null });
  });

  it('refuses an origin the configuration does not trust, saying what to add', async () => {
    const failure = discoverOAuth(endpoint, null, policy(['https://login.example.com']));
    await expect(failure).rejects.toBeInstanceOf(McpUntrustedAuthorizationServerError);
    await expect(failure).rejects.toThrow(`add ${origin} to authorizationServer or trustedAuthorizationServers`);
    expect(metadataHeaders).toBeNull();
  });

  it.each([
    [
      'an issuer on another origin',
      { issuer: 'https://evil.example.com', token_endpoint: 'https://evil.example.com/t' },
    ],
    ['a token endpoint on another origin', { issuer: 'ORIGIN', token_endpoint: 'https://evil.example.com/token' }],
    ['no issuer', { token_endpoint: 'ORIGIN/token' }],
  ])('refuses metadata at the origin with %s', async (_what, body) => {
    metadata = { status: 200, body: JSON.parse(JSON.stringify(body).replaceAll('ORIGIN', origin)) as unknown };
    await expect(discoverOAuth(endpoint, null, policy([origin]))).rejects.toBeInstanceOf(
      McpUntrustedAuthorizationServerError,
    );
  });

  it('says so when the metadata has no token endpoint or cannot be read', async () => {
    metadata = { status: 200, body: { issuer: origin } };
    await expect(discoverOAuth(endpoint, null, policy([origin]))).rejects.toThrow(/announces no token_endpoint/);
    metadata = { status: 500, body: {} };
    const failure = discoverOAuth(endpoint, null, policy([origin]));
    await expect(failure).rejects.toBeInstanceOf(McpOAuthClientError);
    await expect(failure).rejects.toThrow(/answered HTTP 500/);
  });

  it('uses a pinned token endpoint, with metadata confirming it or without metadata', async () => {
    const pinned = `${origin}/pinned/token`;
    expect((await discoverOAuth(endpoint, null, policy([origin], pinned))).tokenEndpoint).toBe(pinned);
    metadata = { status: 200, body: { issuer: origin, token_endpoint: pinned } };
    expect((await discoverOAuth(endpoint, null, policy([origin], pinned))).tokenEndpoint).toBe(pinned);
    metadata = { status: 200, body: { issuer: origin, token_endpoint: `${origin}/token` } };
    await expect(discoverOAuth(endpoint, null, policy([origin], pinned))).rejects.toThrow(
      /not the pinned tokenEndpoint/,
    );
  });

  it('does not fall back when a Protected Resource Metadata URL fails otherwise than 404', async () => {
    prmStatus = 503;
    await expect(discoverOAuth(endpoint, null, policy([origin]))).rejects.toThrow(/No Protected Resource Metadata for/);
    expect(metadataHeaders).toBeNull();
  });

  it('does not fall back when the challenge names a resource_metadata', async () => {
    challenge = `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/elsewhere"`;
    await expect(discoverOAuth(endpoint, null, policy([origin]))).rejects.toThrow(/No Protected Resource Metadata for/);
    expect(metadataHeaders).toBeNull();
  });
});
