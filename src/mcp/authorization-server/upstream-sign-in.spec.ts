import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as jose from 'jose';
import { McpUpstreamSignInError, newTransaction, upstreamSignIn, type UpstreamSignIn } from './upstream-sign-in';

const LIMITS = { timeoutMs: 2000, maxBytes: 65_536 };
const REDIRECT = 'https://mcp.example.com/oauth/upstream/callback';

/**
 * A loopback OpenID Connect provider whose token endpoint answers what each test sets: how the
 * upstream leg treats a good ID token and every way one can be wrong.
 */
describe('upstream OpenID Connect sign-in', () => {
  let server: Server;
  let issuer: string;
  let key: jose.CryptoKey;
  let strangerKey: jose.CryptoKey;
  let answer: (body: URLSearchParams) => { status: number; body: unknown } = () => ({ status: 500, body: {} });
  let metadataExtra: Record<string, unknown> = {};
  const tokenRequests: Array<{ authorization: string | undefined; body: URLSearchParams }> = [];

  beforeAll(async () => {
    const pair = await jose.generateKeyPair('RS256', { extractable: true });
    key = pair.privateKey;
    strangerKey = (await jose.generateKeyPair('RS256')).privateKey;
    const jwk = { ...(await jose.exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    server = createServer((req, res) => {
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/.well-known/openid-configuration')
        return json(200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          ...metadataExtra,
        });
      if (req.url === '/jwks') return json(200, { keys: [jwk] });
      if (req.url === '/token') {
        let text = '';
        req.on('data', (chunk: Buffer) => (text += chunk.toString()));
        req.on('end', () => {
          const body = new URLSearchParams(text);
          tokenRequests.push({ authorization: req.headers.authorization, body });
          const { status, body: reply } = answer(body);
          json(status, reply);
        });
        return;
      }
      json(404, {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  function signIn(): UpstreamSignIn {
    return upstreamSignIn({ issuer, clientId: 'as-client', clientSecret: 's3cret' }, REDIRECT, LIMITS);
  }

  async function idToken(claims: jose.JWTPayload, signWith = key, audience = 'as-client'): Promise<string> {
    return new jose.SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(signWith);
  }

  it('sends the user with PKCE (S256), state, nonce and its redirect URI, and reads the verified ID token', async () => {
    const upstream = signIn();
    const transaction = newTransaction('interaction-1');
    const url = new URL(await upstream.authorizationUrl(transaction));
    expect(`${url.origin}${url.pathname}`).toBe(`${issuer}/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'as-client',
      redirect_uri: REDIRECT,
      scope: 'openid profile email',
      state: transaction.state,
      nonce: transaction.nonce,
      code_challenge: transaction.codeChallenge,
      code_challenge_method: 'S256',
    });
    const token = await idToken({ sub: 'alice', nonce: transaction.nonce, name: 'Alice' });
    answer = () => ({ status: 200, body: { access_token: 'at', token_type: 'Bearer', id_token: token } });
    const user = await upstream.finish('the-code', transaction);
    expect(user).toMatchObject({ issuer, claims: { sub: 'alice', name: 'Alice' } });
    const request = tokenRequests.at(-1)!;
    expect(request.authorization).toBe(`Basic ${Buffer.from('as-client:s3cret').toString('base64')}`);
    expect(Object.fromEntries(request.body)).toEqual({
      grant_type: 'authorization_code',
      code: 'the-code',
      redirect_uri: REDIRECT,
      code_verifier: transaction.codeVerifier,
    });
  });

  it.each<[string, (nonce: string) => Promise<{ status: number; body: unknown }>, string]>([
    [
      'a refused code',
      async () => ({ status: 400, body: { error: 'invalid_grant' } }),
      'The upstream token endpoint answered HTTP 400 (invalid_grant)',
    ],
    ['no ID token', async () => ({ status: 200, body: { access_token: 'at' } }), 'without an ID token'],
    [
      'an ID token for another sign-in (nonce)',
      async () => ({ status: 200, body: { id_token: await idToken({ sub: 'alice', nonce: 'another' }) } }),
      'does not carry the nonce of this sign-in',
    ],
    [
      'an ID token for another client',
      async (nonce) => ({
        status: 200,
        body: { id_token: await idToken({ sub: 'alice', nonce }, key, 'someone-else') },
      }),
      'The upstream ID token was refused',
    ],
    [
      'an ID token signed by another key',
      async (nonce) => ({ status: 200, body: { id_token: await idToken({ sub: 'alice', nonce }, strangerKey) } }),
      'The upstream ID token was refused',
    ],
    [
      'an ID token without a subject',
      async (nonce) => ({ status: 200, body: { id_token: await idToken({ nonce }) } }),
      'has no subject',
    ],
  ])('refuses %s', async (_case, reply, message) => {
    const transaction = newTransaction('interaction-2');
    const settled = await reply(transaction.nonce);
    answer = () => settled;
    const error = await signIn()
      .finish('code', transaction)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpUpstreamSignInError);
    expect((error as McpUpstreamSignInError).code).toBe('server_error');
    expect((error as Error).message).toContain(message);
  });

  it('fails as an outage when the provider publishes no authorization or token endpoint', async () => {
    metadataExtra = { authorization_endpoint: undefined, token_endpoint: undefined };
    try {
      const upstream = signIn();
      await expect(upstream.authorizationUrl(newTransaction('i'))).rejects.toMatchObject({
        name: 'McpAuthorizationServerError',
      });
      await expect(upstream.finish('code', newTransaction('i'))).rejects.toMatchObject({
        name: 'McpAuthorizationServerError',
      });
    } finally {
      metadataExtra = {};
    }
  });
});

describe('upstream GitHub sign-in', () => {
  it('sends the user to github.com with PKCE and read:user unless told otherwise', async () => {
    const upstream = upstreamSignIn({ kind: 'github', clientId: 'gh', clientSecret: 's' }, REDIRECT, LIMITS);
    const transaction = newTransaction('i');
    const url = new URL(await upstream.authorizationUrl(transaction));
    expect(`${url.origin}${url.pathname}`).toBe('https://github.com/login/oauth/authorize');
    expect(url.searchParams.get('scope')).toBe('read:user');
    expect(url.searchParams.get('code_challenge')).toBe(transaction.codeChallenge);
    expect(url.searchParams.get('state')).toBe(transaction.state);
  });
});
