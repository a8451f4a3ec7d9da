import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { McpTransportError } from '../../errors/mcp-client.errors';
import { HttpTransport } from '../transports/http/http.transport';
import { clientCredentials, MAX_SCOPES } from './client-credentials.auth';
import type { McpAuthTarget } from './mcp-client-auth.interface';
import { MemoryTokenStore } from './memory-token.store';
import {
  McpOAuthClientError,
  McpOAuthScopeLimitError,
  McpUntrustedAuthorizationServerError,
} from './oauth-client.errors';

/** One request a loopback peer received. */
interface Hit {
  method: string;
  url: string;
  authorization: string | null;
  body: string;
}

type Route = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A loopback HTTP server whose paths answer as `routes` say (404 elsewhere), recording every request. */
interface Peer {
  origin: string;
  hits: Hit[];
  routes: Record<string, Route>;
  close(): Promise<void>;
}

const json = (res: ServerResponse, body: unknown, status = 200) =>
  void res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));

async function startPeer(): Promise<Peer> {
  const hits: Hit[] = [];
  const routes: Record<string, Route> = {};
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = req.url ?? '/';
      hits.push({ method: req.method ?? '', url, authorization: req.headers.authorization ?? null, body });
      const route = routes[`${req.method} ${url}`] ?? routes[url];
      if (route) route(req, res, body);
      else res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    routes,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Makes `peer` an authorization server whose issuer is its origin (plus `path`): metadata and a token endpoint. */
function serveAuthorizationServer(peer: Peer, path = ''): void {
  const issuer = `${peer.origin}${path}`;
  let issued = 0;
  peer.routes[`/.well-known/oauth-authorization-server${path}`] = (_req, res) =>
    json(res, { issuer, token_endpoint: `${issuer}/token` });
  peer.routes[`POST ${path}/token`] = (_req, res) =>
    json(res, { access_token: `${peer.origin}-token-${++issued}`, token_type: 'Bearer', expires_in: 600 });
}

/** Makes `peer` an MCP server whose well-known Protected Resource Metadata names `servers`. */
function serveResource(peer: Peer, servers: () => string[]): void {
  peer.routes['/.well-known/oauth-protected-resource/mcp'] = (_req, res) =>
    json(res, { resource: `${peer.origin}/mcp`, authorization_servers: servers() });
}

const SECRET = 'the-agent-secret-9f3c';
const target = (peer: Peer): McpAuthTarget => ({ url: new URL(`${peer.origin}/mcp`) });
const tokenRequests = (peer: Peer) => peer.hits.filter((hit) => hit.method === 'POST' && hit.url.endsWith('/token'));
/** Whether any request `peer` got carried the client secret in any form. */
const sawSecret = (peer: Peer) =>
  peer.hits.some(
    (hit) =>
      hit.body.includes(SECRET) ||
      (hit.authorization?.startsWith('Basic ') &&
        Buffer.from(hit.authorization.slice(6), 'base64').toString().includes(SECRET)),
  );

describe('clientCredentials: the trust anchor is required at boot', () => {
  it('refuses an entry with a secret or a key and no trusted authorization server, saying what to add', () => {
    const refusal = (() => {
      try {
        clientCredentials({ clientId: 'agent', clientSecret: SECRET });
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(refusal).toBeInstanceOf(McpConfigurationError);
    expect((refusal as Error).message).toContain(
      'clientCredentials for "agent" names no authorization server to trust',
    );
    expect((refusal as Error).message).toContain("Add authorizationServer: 'https://<issuer>'");
    expect((refusal as Error).message).not.toContain(SECRET);
    expect(() => clientCredentials({ clientId: 'agent', privateKeyJwt: { key: 'pem', alg: 'ES256' } })).toThrow(
      McpConfigurationError,
    );
    expect(() =>
      clientCredentials({ clientId: 'agent', clientSecret: SECRET, trustedAuthorizationServers: [] }),
    ).toThrow('names no authorization server to trust');
  });

  it('takes https issuers, and http only on a loopback host; no query, no fragment, not both options', () => {
    const build = (anchor: { authorizationServer?: string; trustedAuthorizationServers?: string[] }) => () =>
      clientCredentials({ clientId: 'agent', clientSecret: SECRET, ...anchor });
    expect(build({ authorizationServer: 'https://login.example.com/realms/x' })).not.toThrow();
    expect(
      build({
        trustedAuthorizationServers: [
          'https://a.example',
          'http://127.0.0.1:8080',
          'http://localhost:1',
          'http://[::1]:2',
        ],
      }),
    ).not.toThrow();
    expect(build({ authorizationServer: 'http://login.example.com' })).toThrow(
      'authorizationServer "http://login.example.com" is not https',
    );
    expect(build({ trustedAuthorizationServers: ['https://a.example', 'http://10.0.0.1'] })).toThrow(
      'trustedAuthorizationServers[1] "http://10.0.0.1" is not https',
    );
    expect(build({ authorizationServer: 'https://a.example/?tenant=x' })).toThrow('has a query or fragment');
    expect(build({ authorizationServer: 'login.example.com' })).toThrow('is not an absolute URL');
    expect(
      build({ authorizationServer: 'https://a.example', trustedAuthorizationServers: ['https://a.example'] }),
    ).toThrow('has both authorizationServer and trustedAuthorizationServers');
    expect(build({ authorizationServer: 'http://login.example.com' })).toThrow(McpConfigurationError);
    const limited = (limits: { timeoutMs?: number; maxResponseBytes?: number }) => () =>
      clientCredentials({
        clientId: 'agent',
        clientSecret: SECRET,
        authorizationServer: 'https://a.example',
        ...limits,
      });
    expect(limited({ maxResponseBytes: 0 })).toThrow(
      'clientCredentials for "agent": maxResponseBytes must be an integer >= 1 (got 0); remove it to use the default 65536 bytes.',
    );
    expect(limited({ timeoutMs: 1.5 })).toThrow(McpConfigurationError);
    expect(limited({ maxResponseBytes: 1024, timeoutMs: 500 })).not.toThrow();
  });
});

describe('clientCredentials against a hostile MCP server', () => {
  let hostile: Peer;
  let trusted: Peer;
  let internal: Peer;

  beforeEach(async () => {
    [hostile, trusted, internal] = await Promise.all([startPeer(), startPeer(), startPeer()]);
    serveAuthorizationServer(trusted);
    serveAuthorizationServer(hostile);
    internal.routes['/meta'] = (_req, res) =>
      json(res, { resource: `${hostile.origin}/mcp`, authorization_servers: [trusted.origin] });
  });

  afterEach(() => Promise.all([hostile, trusted, internal].map((peer) => peer.close())));

  it('never sends the secret to the authorization server a 401 challenge leads to, when it is not trusted', async () => {
    // No well-known metadata: the probe's 401 names the server's own document, which names the server itself.
    hostile.routes['POST /mcp'] = (_req, res) =>
      void res.writeHead(401, { 'WWW-Authenticate': `Bearer resource_metadata="${hostile.origin}/meta"` }).end();
    hostile.routes['/meta'] = (_req, res) =>
      json(res, { resource: `${hostile.origin}/mcp`, authorization_servers: [hostile.origin] });
    const auth = clientCredentials({
      clientId: 'agent',
      clientSecret: SECRET,
      trustedAuthorizationServers: [trusted.origin],
    });

    const error = await auth.getToken(target(hostile), new MemoryTokenStore()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpUntrustedAuthorizationServerError);
    expect((error as Error).message).toContain(
      `does not name the authorization server ${trusted.origin} (it names ${hostile.origin})`,
    );
    expect((error as Error).message).toContain('authorizationServer or listed in trustedAuthorizationServers');
    expect(tokenRequests(hostile)).toEqual([]);
    expect(sawSecret(hostile)).toBe(false);
    expect(trusted.hits).toEqual([]);
  });

  it('among the authorization servers a server names, asks only the trusted one', async () => {
    serveResource(hostile, () => [hostile.origin, trusted.origin]);
    const auth = clientCredentials({
      clientId: 'agent',
      clientSecret: SECRET,
      trustedAuthorizationServers: ['https://other.example', trusted.origin],
    });

    await expect(auth.getToken(target(hostile), new MemoryTokenStore())).resolves.toBe(`${trusted.origin}-token-1`);
    expect(tokenRequests(trusted)).toHaveLength(1);
    expect(new URLSearchParams(tokenRequests(trusted)[0].body).get('resource')).toBe(`${hostile.origin}/mcp`);
    expect(hostile.hits.map((hit) => `${hit.method} ${hit.url}`)).toEqual([
      'GET /.well-known/oauth-protected-resource/mcp',
    ]);
    expect(sawSecret(hostile)).toBe(false);
  });

  it('does not read a resource_metadata on another origin: not from the probe, not from a later 401', async () => {
    hostile.routes['POST /mcp'] = (_req, res) =>
      void res.writeHead(401, { 'WWW-Authenticate': `Bearer resource_metadata="${internal.origin}/meta"` }).end();
    const auth = clientCredentials({ clientId: 'agent', clientSecret: SECRET, authorizationServer: trusted.origin });
    const store = new MemoryTokenStore();
    const error = await auth.getToken(target(hostile), store).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpUntrustedAuthorizationServerError);
    expect((error as Error).message).toContain(
      `names the resource_metadata ${internal.origin}/meta, which is not on its own origin`,
    );
    expect(internal.hits).toEqual([]);

    // Now a server whose discovery works, whose later 401 points elsewhere: the discovery made stays.
    serveResource(hostile, () => [trusted.origin]);
    const first = await auth.getToken(target(hostile), store);
    await auth.invalidate(target(hostile), store, first, {
      status: 401,
      error: 'invalid_token',
      scope: null,
      resourceMetadata: `${internal.origin}/meta`,
    });
    await expect(auth.getToken(target(hostile), store)).resolves.toBe(`${trusted.origin}-token-2`);
    expect(internal.hits).toEqual([]);
    expect(sawSecret(hostile)).toBe(false);
  });

  it("refuses a token endpoint that is not on the trusted issuer's origin, and metadata naming another issuer", async () => {
    serveResource(hostile, () => [trusted.origin]);
    trusted.routes['/.well-known/oauth-authorization-server'] = (_req, res) =>
      json(res, { issuer: trusted.origin, token_endpoint: `${hostile.origin}/token` });
    const auth = clientCredentials({ clientId: 'agent', clientSecret: SECRET, authorizationServer: trusted.origin });
    const error = await auth.getToken(target(hostile), new MemoryTokenStore()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpUntrustedAuthorizationServerError);
    expect((error as Error).message).toContain(
      `announces the token endpoint ${hostile.origin}/token, which is not on the issuer's origin`,
    );
    expect(tokenRequests(hostile)).toEqual([]);
    expect(sawSecret(hostile)).toBe(false);

    trusted.routes['/.well-known/oauth-authorization-server'] = (_req, res) =>
      json(res, { issuer: hostile.origin, token_endpoint: `${trusted.origin}/token` });
    const mismatch = await auth.getToken(target(hostile), new MemoryTokenStore()).catch((e: unknown) => e);
    expect(mismatch).toBeInstanceOf(McpUntrustedAuthorizationServerError);
    expect((mismatch as Error).message).toContain(`names the issuer "${hostile.origin}", not ${trusted.origin}`);
    expect(tokenRequests(trusted)).toEqual([]);
  });

  it("asks a token for each server's own resource, and refuses metadata naming another server's", async () => {
    const other = await startPeer();
    try {
      serveResource(hostile, () => [trusted.origin]);
      serveResource(other, () => [trusted.origin]);
      const auth = clientCredentials({ clientId: 'agent', clientSecret: SECRET, authorizationServer: trusted.origin });
      const store = new MemoryTokenStore();
      const forOther = await auth.getToken(target(other), store);
      const forHostile = await auth.getToken(target(hostile), store);
      expect(forHostile).not.toBe(forOther);
      expect(tokenRequests(trusted).map((hit) => new URLSearchParams(hit.body).get('resource'))).toEqual([
        `${other.origin}/mcp`,
        `${hostile.origin}/mcp`,
      ]);

      // A server claiming to be the other one gets no token: not that one, not a new one.
      hostile.routes['/.well-known/oauth-protected-resource/mcp'] = (_req, res) =>
        json(res, { resource: `${other.origin}/mcp`, authorization_servers: [trusted.origin] });
      const fresh = clientCredentials({ clientId: 'agent', clientSecret: SECRET, authorizationServer: trusted.origin });
      await expect(fresh.getToken(target(hostile), store)).rejects.toThrow(
        `names the resource "${other.origin}/mcp", which is not this endpoint`,
      );
      expect(tokenRequests(trusted)).toHaveLength(2);
    } finally {
      await other.close();
    }
  });

  it('follows no redirect during discovery', async () => {
    hostile.routes['/.well-known/oauth-protected-resource/mcp'] = (_req, res) =>
      void res.writeHead(302, { Location: `${internal.origin}/meta` }).end();
    const auth = clientCredentials({ clientId: 'agent', clientSecret: SECRET, authorizationServer: trusted.origin });
    await expect(auth.getToken(target(hostile), new MemoryTokenStore())).rejects.toBeInstanceOf(McpOAuthClientError);
    expect(internal.hits).toEqual([]);
  });

  it('stops reading a metadata document or a token response at maxResponseBytes', async () => {
    const huge = (_req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(`{"issuer":"${'x'.repeat(200_000)}"}`);
    };
    serveResource(hostile, () => [trusted.origin]);
    trusted.routes['/.well-known/oauth-authorization-server'] = huge;
    const auth = clientCredentials({ clientId: 'agent', clientSecret: SECRET, authorizationServer: trusted.origin });
    const error = await auth.getToken(target(hostile), new MemoryTokenStore()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpOAuthClientError);
    expect((error as Error).message).toBe(
      `${trusted.origin}/.well-known/oauth-authorization-server answered a body larger than maxResponseBytes (65536 bytes)`,
    );

    serveAuthorizationServer(trusted);
    trusted.routes['POST /token'] = huge;
    const small = clientCredentials({
      clientId: 'agent',
      clientSecret: SECRET,
      authorizationServer: trusted.origin,
      maxResponseBytes: 1000,
    });
    const refused = await small.getToken(target(hostile), new MemoryTokenStore()).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(McpOAuthClientError);
    expect((refused as Error).message).toBe(
      `The token endpoint ${trusted.origin}/token answered a body larger than maxResponseBytes (1000 bytes)`,
    );
  });
});

describe('clientCredentials: scopes from insufficient_scope challenges are bounded', () => {
  let resource: Peer;
  let as: Peer;

  beforeEach(async () => {
    [resource, as] = await Promise.all([startPeer(), startPeer()]);
    serveAuthorizationServer(as);
    serveResource(resource, () => [as.origin]);
  });

  afterEach(() => Promise.all([resource, as].map((peer) => peer.close())));

  const scopes = (from: number, count: number) => Array.from({ length: count }, (_, i) => `s${from + i}`).join(' ');
  const challenge = (scope: string) => ({
    status: 403 as const,
    error: 'insufficient_scope',
    scope,
    resourceMetadata: null,
  });

  it('refuses a challenge that would grow the union past the bound, and asks with what it had', async () => {
    const auth = clientCredentials({
      clientId: 'agent',
      clientSecret: SECRET,
      authorizationServer: as.origin,
      scope: 'base',
    });
    const store = new MemoryTokenStore();
    const token = await auth.getToken(target(resource), store);

    // Repeated challenges, each asking for ten more: accepted up to the bound, then refused.
    let refused: unknown = null;
    for (let round = 0; round < 20 && !refused; round++) {
      refused = await auth.invalidate(target(resource), store, token, challenge(scopes(round * 10, 10))).then(
        () => null,
        (e: unknown) => e,
      );
    }
    expect(refused).toBeInstanceOf(McpOAuthScopeLimitError);
    expect((refused as Error).message).toContain(`more than ${MAX_SCOPES} scopes or 2048 characters`);
    await expect(auth.invalidate(target(resource), store, token, challenge('x'.repeat(3000)))).rejects.toThrow(
      'its scope is longer than 2048 characters',
    );
    await expect(auth.invalidate(target(resource), store, token, challenge('ok "quoted"'))).rejects.toThrow(
      'a character RFC 6749 does not allow',
    );

    await auth.getToken(target(resource), store);
    const asked = (new URLSearchParams(tokenRequests(as).at(-1)?.body).get('scope') ?? '').split(' ');
    expect(asked.length).toBeLessThanOrEqual(MAX_SCOPES);
    expect(asked).toContain('base');
    expect(asked).not.toContain('x'.repeat(3000));
  });

  it('through the HTTP transport: a 403 asking for too many scopes fails the call, delivered false, with the typed cause', async () => {
    resource.routes['POST /mcp'] = (_req, res) =>
      void res
        .writeHead(403, { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scopes(0, 200)}"` })
        .end();
    const auth = clientCredentials({ clientId: 'agent', clientSecret: SECRET, authorizationServer: as.origin });
    const transport = new HttpTransport({ url: `${resource.origin}/mcp`, auth, retry: { retries: 0 } });
    const call = { jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } };
    const error = await transport
      .deliver(call, {
        sessionId: 'session-1',
        protocolVersion: '2025-11-25',
        context: { server: 'scoped', scopeKey: '', timeoutMs: 10_000 },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpTransportError);
    expect((error as McpTransportError).status).toBe(403);
    expect((error as McpTransportError).delivered).toBe(false);
    expect((error as Error).cause).toBeInstanceOf(McpOAuthScopeLimitError);
    expect((error as Error).message).toContain('a challenge the auth provider refused');
    expect(resource.hits.filter((hit) => hit.method === 'POST' && hit.url === '/mcp')).toHaveLength(1);
  });
});

describe('clientCredentials: a pinned tokenEndpoint on another origin than the issuer', () => {
  let resource: Peer;
  let issuer: Peer;
  let tokens: Peer;
  let hostile: Peer;

  beforeEach(async () => {
    [resource, issuer, tokens, hostile] = await Promise.all([startPeer(), startPeer(), startPeer(), startPeer()]);
    serveResource(resource, () => [issuer.origin]);
    // The issuer's metadata lives on its origin; its token endpoint on another host.
    issuer.routes['/.well-known/oauth-authorization-server'] = (_req, res) =>
      json(res, { issuer: issuer.origin, token_endpoint: `${tokens.origin}/oauth/token` });
    for (const peer of [tokens, hostile]) {
      let issued = 0;
      peer.routes['POST /oauth/token'] = (_req, res) =>
        json(res, { access_token: `${peer.origin}-token-${++issued}`, token_type: 'Bearer', expires_in: 600 });
    }
  });

  afterEach(() => Promise.all([resource, issuer, tokens, hostile].map((peer) => peer.close())));

  const pinnedTo = (tokenEndpoint: string) =>
    clientCredentials({ clientId: 'agent', clientSecret: SECRET, authorizationServer: issuer.origin, tokenEndpoint });

  it('sends the credentials to the pinned endpoint the issuer announces; without the pin, to nobody', async () => {
    const unpinned = clientCredentials({ clientId: 'agent', clientSecret: SECRET, authorizationServer: issuer.origin });
    const refusal = await unpinned.getToken(target(resource), new MemoryTokenStore()).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(McpUntrustedAuthorizationServerError);
    expect((refusal as Error).message).toContain(
      `announces the token endpoint ${tokens.origin}/oauth/token, which is not on the issuer's origin`,
    );
    expect((refusal as Error).message).toContain('pin an endpoint on another origin with tokenEndpoint');
    expect(tokens.hits).toEqual([]);

    await expect(
      pinnedTo(`${tokens.origin}/oauth/token`).getToken(target(resource), new MemoryTokenStore()),
    ).resolves.toBe(`${tokens.origin}-token-1`);
    expect(tokenRequests(tokens)).toHaveLength(1);
    expect(new URLSearchParams(tokenRequests(tokens)[0].body).get('resource')).toBe(`${resource.origin}/mcp`);
    expect(Buffer.from((tokenRequests(tokens)[0].authorization ?? '').slice(6), 'base64').toString()).toBe(
      `agent:${SECRET}`,
    );
    expect(sawSecret(resource)).toBe(false);
    expect(sawSecret(issuer)).toBe(false);
  });

  it('refuses metadata announcing another token endpoint than the pinned one, sending the credentials nowhere', async () => {
    issuer.routes['/.well-known/oauth-authorization-server'] = (_req, res) =>
      json(res, { issuer: issuer.origin, token_endpoint: `${hostile.origin}/oauth/token` });
    const error = await pinnedTo(`${tokens.origin}/oauth/token`)
      .getToken(target(resource), new MemoryTokenStore())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpUntrustedAuthorizationServerError);
    expect((error as Error).message).toBe(
      `The authorization server ${issuer.origin} announces the token endpoint ${hostile.origin}/oauth/token, not the pinned tokenEndpoint ${tokens.origin}/oauth/token; ` +
        'the client credentials are sent only to the pinned one',
    );
    expect(hostile.hits).toEqual([]);
    expect(tokens.hits).toEqual([]);

    // The issuer still has to be the pinned one: a pinned endpoint does not make other metadata acceptable.
    issuer.routes['/.well-known/oauth-authorization-server'] = (_req, res) =>
      json(res, { issuer: hostile.origin, token_endpoint: `${tokens.origin}/oauth/token` });
    const impostor = await pinnedTo(`${tokens.origin}/oauth/token`)
      .getToken(target(resource), new MemoryTokenStore())
      .catch((e: unknown) => e);
    expect(impostor).toBeInstanceOf(McpUntrustedAuthorizationServerError);
    expect((impostor as Error).message).toContain(`names the issuer "${hostile.origin}", not ${issuer.origin}`);
    expect(tokens.hits).toEqual([]);
  });

  it('uses the pinned endpoint for an issuer that publishes no metadata, or metadata without a token_endpoint', async () => {
    delete issuer.routes['/.well-known/oauth-authorization-server'];
    await expect(
      pinnedTo(`${tokens.origin}/oauth/token`).getToken(target(resource), new MemoryTokenStore()),
    ).resolves.toBe(`${tokens.origin}-token-1`);
    expect(issuer.hits.map((hit) => hit.url)).toEqual([
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
    ]);

    issuer.routes['/.well-known/oauth-authorization-server'] = (_req, res) =>
      json(res, { issuer: issuer.origin, token_endpoint_auth_methods_supported: ['client_secret_post'] });
    await expect(
      pinnedTo(`${tokens.origin}/oauth/token`).getToken(target(resource), new MemoryTokenStore()),
    ).resolves.toBe(`${tokens.origin}-token-2`);
    // The metadata's methods still count: the secret goes in the form, as the issuer asks.
    const form = new URLSearchParams(tokenRequests(tokens)[1].body);
    expect(form.get('client_secret')).toBe(SECRET);
    expect(tokenRequests(tokens)[1].authorization).toBeNull();
    expect(sawSecret(issuer)).toBe(false);
  });

  it('takes a pinned endpoint only as an https URL (http on loopback), without fragment or credentials, with authorizationServer', () => {
    const build =
      (
        tokenEndpoint: unknown,
        anchor: { authorizationServer?: string; trustedAuthorizationServers?: string[] } = {
          authorizationServer: 'https://login.example.com',
        },
      ) =>
      () =>
        clientCredentials({
          clientId: 'agent',
          clientSecret: SECRET,
          ...anchor,
          tokenEndpoint: tokenEndpoint as string,
        });
    expect(build('https://tokens.example.net/oauth2/token?tenant=x')).not.toThrow();
    expect(build('http://127.0.0.1:9000/token')).not.toThrow();
    expect(build('http://tokens.example.net/token')).toThrow(McpConfigurationError);
    expect(build('http://tokens.example.net/token')).toThrow(
      'clientCredentials for "agent": tokenEndpoint "http://tokens.example.net/token" is not https. ' +
        'Give the token endpoint URL exactly as the authorization server serves it: an https URL without fragment or credentials ' +
        "(http only on a loopback host such as 127.0.0.1, localhost or [::1]), or remove it to use the one the issuer's metadata announces on its own origin.",
    );
    expect(build('https://tokens.example.net/token#x')).toThrow(
      'tokenEndpoint "https://tokens.example.net/token#x" has a fragment',
    );
    expect(build('https://user:pw@tokens.example.net/token')).toThrow('carries credentials');
    expect(build('/token')).toThrow('tokenEndpoint "/token" is not an absolute URL');
    expect(build('')).toThrow('tokenEndpoint "" is not a non-empty string');
    expect(build(42)).toThrow('tokenEndpoint 42 is not a non-empty string');
    expect(
      build('https://tokens.example.net/token', { trustedAuthorizationServers: ['https://login.example.com'] }),
    ).toThrow(
      `clientCredentials for "agent": tokenEndpoint belongs to one authorization server, so it needs that server pinned with authorizationServer: 'https://<issuer>' instead of trustedAuthorizationServers.`,
    );
  });
});
