import { generateKeyPairSync, verify } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cacheTtlMs, clientCredentials } from './client-credentials.auth';
import { MemoryTokenStore } from './memory-token.store';
import { authorizationServerMetadataUrls, protectedResourceMetadataUrls, resourceCovers } from './oauth-discovery';
import { staticToken } from './static-token.auth';

describe('clientCredentials', () => {
  it('needs a client id and exactly one of clientSecret and privateKeyJwt', () => {
    expect(() => clientCredentials({ clientId: '' })).toThrow('clientCredentials needs a clientId');
    expect(() => clientCredentials({ clientId: 'a' })).toThrow(
      'clientCredentials for "a" needs exactly one of clientSecret and privateKeyJwt',
    );
    expect(() =>
      clientCredentials({ clientId: 'a', clientSecret: 's', privateKeyJwt: { key: 'pem', alg: 'RS256' } }),
    ).toThrow('exactly one');
    expect(() =>
      clientCredentials({ clientId: 'a', clientSecret: 's', tokenEndpointAuthMethod: 'private_key_jwt' }),
    ).toThrow('tokenEndpointAuthMethod "private_key_jwt" needs privateKeyJwt');
    expect(() =>
      clientCredentials({
        clientId: 'a',
        privateKeyJwt: { key: 'pem', alg: 'RS256' },
        tokenEndpointAuthMethod: 'client_secret_post',
      }),
    ).toThrow('needs clientSecret');
    expect(
      typeof clientCredentials({ clientId: 'a', clientSecret: 's', authorizationServer: 'https://as.example' })
        .getToken,
    ).toBe('function');
  });

  it('keeps a token for its lifetime minus a tenth, at most a minute less', () => {
    expect(cacheTtlMs(2)).toBe(1800);
    expect(cacheTtlMs(300)).toBe(270_000);
    expect(cacheTtlMs(3600)).toBe(3_540_000);
  });
});

describe('OAuth discovery URLs', () => {
  it('puts the well-known segment before the path, then tries the root', () => {
    expect(protectedResourceMetadataUrls(new URL('https://a.example/tenant/mcp'))).toEqual([
      'https://a.example/.well-known/oauth-protected-resource/tenant/mcp',
      'https://a.example/.well-known/oauth-protected-resource',
    ]);
    expect(protectedResourceMetadataUrls(new URL('https://a.example/'))).toEqual([
      'https://a.example/.well-known/oauth-protected-resource',
    ]);
    expect(authorizationServerMetadataUrls('https://as.example/realms/x')).toEqual([
      'https://as.example/.well-known/oauth-authorization-server/realms/x',
      'https://as.example/.well-known/openid-configuration/realms/x',
      'https://as.example/realms/x/.well-known/openid-configuration',
    ]);
  });
});

describe('resourceCovers', () => {
  it('takes a resource of the same origin whose path holds the endpoint, nothing else', () => {
    const endpoint = new URL('https://a.example/tenant/mcp');
    expect(resourceCovers('https://a.example/tenant/mcp', endpoint)).toBe(true);
    expect(resourceCovers('https://a.example/tenant', endpoint)).toBe(true);
    expect(resourceCovers('https://a.example', endpoint)).toBe(true);
    expect(resourceCovers('https://a.example/other/mcp', endpoint)).toBe(false);
    expect(resourceCovers('https://a.example/ten', endpoint)).toBe(false);
    expect(resourceCovers('https://b.example/tenant/mcp', endpoint)).toBe(false);
    expect(resourceCovers('not a url', endpoint)).toBe(false);
  });
});

describe('staticToken', () => {
  it('always gives its token, and refuses an empty one', async () => {
    const auth = staticToken('tok-1');
    const target = { url: new URL('https://a.example/mcp') };
    const store = new MemoryTokenStore();
    await auth.invalidate(target, store, 'tok-1');
    await expect(auth.getToken(target, store)).resolves.toBe('tok-1');
    expect(() => staticToken('')).toThrow('staticToken(token) needs a non-empty string');
  });
});

describe('MemoryTokenStore', () => {
  it('forgets a token only when it still is the refused one, and takes a lock once', async () => {
    const store = new MemoryTokenStore();
    await store.set('k', 'new', 60_000);
    await store.delete('k', 'old');
    await expect(store.get('k')).resolves.toBe('new');
    await store.delete('k', 'new');
    await expect(store.get('k')).resolves.toBeNull();
    await expect(store.lock('l', 60_000)).resolves.toBe(true);
    await expect(store.lock('l', 60_000)).resolves.toBe(false);
    await store.unlock('l');
    await expect(store.lock('l', 60_000)).resolves.toBe(true);
  });
});

describe('clientCredentials with private_key_jwt', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const forms: URLSearchParams[] = [];
  let server: Server;
  let origin: string;

  // A resource and its authorization server on one loopback origin; the issuer has a path, so
  // that the issuer and the token endpoint are different URLs.
  beforeAll(async () => {
    server = createServer((req, res) => {
      const json = (body: unknown) =>
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/.well-known/oauth-protected-resource/mcp')
        return json({ resource: `${origin}/mcp`, authorization_servers: [`${origin}/as`] });
      if (req.url === '/.well-known/oauth-authorization-server/as') {
        return json({
          issuer: `${origin}/as`,
          token_endpoint: `${origin}/as/oauth/token`,
          token_endpoint_auth_methods_supported: ['private_key_jwt'],
        });
      }
      if (req.method === 'POST' && req.url === '/as/oauth/token') {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        req.on('end', () => {
          forms.push(new URLSearchParams(body));
          json({ access_token: `token-${forms.length}`, token_type: 'Bearer', expires_in: 600 });
        });
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('signs an assertion whose audience is the issuer identifier, as one string', async () => {
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const auth = clientCredentials({
      clientId: 'agent',
      privateKeyJwt: { key: pem, alg: 'ES256', kid: 'k1' },
      authorizationServer: `${origin}/as`,
    });
    await expect(auth.getToken({ url: new URL(`${origin}/mcp`) }, new MemoryTokenStore())).resolves.toBe('token-1');

    expect(forms).toHaveLength(1);
    const form = forms[0];
    expect(form.get('grant_type')).toBe('client_credentials');
    expect(form.get('resource')).toBe(`${origin}/mcp`);
    expect(form.get('client_id')).toBe('agent');
    expect(form.get('client_assertion_type')).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    const [header, payload, signature] = (form.get('client_assertion') ?? '').split('.');
    const decode = (part: string) =>
      JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
    expect(decode(header)).toEqual({ alg: 'ES256', kid: 'k1' });
    const claims = decode(payload);
    expect(claims.aud).toBe(`${origin}/as`);
    expect(claims.iss).toBe('agent');
    expect(claims.sub).toBe('agent');
    expect((claims.exp as number) - (claims.iat as number)).toBe(60);
    expect(
      verify(
        'sha256',
        Buffer.from(`${header}.${payload}`),
        { key: publicKey, dsaEncoding: 'ieee-p1363' },
        Buffer.from(signature, 'base64url'),
      ),
    ).toBe(true);
  });
});
