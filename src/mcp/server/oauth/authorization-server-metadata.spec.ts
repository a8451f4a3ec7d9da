import { createServer, type Server } from 'node:http';
import { discoverAuthorizationServer, metadataUrls, OnceWhenDone } from './authorization-server-metadata';
import { McpAuthorizationServerError } from './oauth.errors';

describe('authorization server discovery', () => {
  let server: Server;
  let origin: string;
  const documents = new Map<string, unknown>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      const body = documents.get(req.url ?? '');
      if (body === 'fail') return void res.writeHead(502).end();
      if (body === undefined) return void res.writeHead(404).end();
      res.setHeader('Content-Type', 'application/json').end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });

  afterAll(() => new Promise((resolve) => server.close(resolve)));
  afterEach(() => documents.clear());

  it('tries RFC 8414 then OpenID Connect, inserting the well-known segment before the issuer path', () => {
    expect(metadataUrls('https://auth.example.com')).toEqual([
      'https://auth.example.com/.well-known/oauth-authorization-server',
      'https://auth.example.com/.well-known/openid-configuration',
    ]);
    expect(metadataUrls('https://auth.example.com/tenant1')).toEqual([
      'https://auth.example.com/.well-known/oauth-authorization-server/tenant1',
      'https://auth.example.com/.well-known/openid-configuration/tenant1',
      'https://auth.example.com/tenant1/.well-known/openid-configuration',
    ]);
  });

  it('falls back to OpenID Connect discovery when RFC 8414 metadata is missing', async () => {
    const issuer = `${origin}/realm`;
    documents.set('/realm/.well-known/openid-configuration', { issuer, jwks_uri: `${issuer}/certs` });
    expect(await discoverAuthorizationServer(issuer, { timeoutMs: 2000, maxBytes: 65_536 })).toEqual({
      issuer,
      jwks_uri: `${issuer}/certs`,
    });
  });

  it('refuses metadata that names another issuer', async () => {
    documents.set('/.well-known/oauth-authorization-server', { issuer: 'https://impostor.example' });
    await expect(discoverAuthorizationServer(origin, { timeoutMs: 2000, maxBytes: 65_536 })).rejects.toThrow(
      /names the issuer "https:\/\/impostor.example"/,
    );
  });

  it('fails with McpAuthorizationServerError when nothing answers, or the server fails', async () => {
    await expect(discoverAuthorizationServer(origin, { timeoutMs: 2000, maxBytes: 65_536 })).rejects.toThrow(
      /No authorization server metadata .* tried .*HTTP 404/,
    );
    documents.set('/.well-known/oauth-authorization-server', 'fail');
    await expect(discoverAuthorizationServer(origin, { timeoutMs: 2000, maxBytes: 65_536 })).rejects.toBeInstanceOf(
      McpAuthorizationServerError,
    );
  });

  it('OnceWhenDone shares one computation and forgets a failure', async () => {
    let calls = 0;
    const once = new OnceWhenDone(async () => {
      calls++;
      if (calls === 1) throw new Error('down');
      return calls;
    });
    await expect(once.get()).rejects.toThrow('down');
    const [a, b] = await Promise.all([once.get(), once.get()]);
    expect([a, b, calls]).toEqual([2, 2, 2]);
  });
});
