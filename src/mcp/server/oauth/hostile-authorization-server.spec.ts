import { McpInfrastructureError } from '../../errors/mcp-infrastructure.errors';
import type { McpResolvedOptions } from '../config/mcp.options';
import { IntrospectionVerifier } from './introspection-verifier';
import { JwtVerifier } from './jwt-verifier';
import { resolveOAuthOptions } from '../config/mcp-oauth.options';
import { McpAuthorizationServerError } from './oauth.errors';
import {
  drip,
  flood,
  json,
  measured,
  redirect,
  startHostile,
  type HostileServer,
  type Outcome,
} from '../../../../test/support/hostile-http';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
const TIMEOUT_MS = 1500;
const MAX_BYTES = 65_536;
/** What the verifier may take at most: its deadline for each of the three discovery URLs, and slack for a loaded machine. */
const DEADLINE_MS = TIMEOUT_MS * 3 + 2000;
/** How far the process may grow while a hostile answer is refused: the bound, socket buffers, and what the test runner allocates meanwhile. */
const MEMORY_SLACK = 48 * MIB;
/** How much the hostile server may manage to write before it sees the connection closed: the bound and the kernel's socket buffers. */
const WRITE_SLACK = 32 * MIB;

/** A JWT the verifier gets as far as asking for its keys with: its signature is never checked. */
const UNSIGNED_JWT =
  [{ alg: 'RS256', typ: 'JWT', kid: 'k1' }, { sub: 'someone' }]
    .map((part) => Buffer.from(JSON.stringify(part)).toString('base64url'))
    .join('.') + '.c2ln';

const AUDIENCE = 'https://mcp.example.com/mcp';
const mountWith = (issuer: string) =>
  ({
    oauth: resolveOAuthOptions('m', '/mcp', { publicUrl: 'https://mcp.example.com', authorizationServers: [issuer] }),
  }) as McpResolvedOptions;

describe('verifiers against a hostile authorization server', () => {
  let hostile: HostileServer;
  let sink: HostileServer;

  beforeEach(async () => {
    [hostile, sink] = await Promise.all([startHostile(), startHostile()]);
  });

  afterEach(() => Promise.all([hostile, sink].map((server) => server.close())));

  /** The bounded refusal every oversized answer must end in, fast and small. */
  async function expectRefusedAtTheBound(outcome: Outcome, url: string): Promise<void> {
    expect(outcome.error).toBeInstanceOf(McpAuthorizationServerError);
    expect(outcome.error).toBeInstanceOf(McpInfrastructureError);
    expect((outcome.error as Error).message).toContain(
      `The authorization server at ${url} answered a body larger than maxResponseBytes (${MAX_BYTES} bytes)`,
    );
    expect(outcome.ms).toBeLessThan(DEADLINE_MS);
    expect(outcome.peakGrowth).toBeLessThan(MAX_BYTES + MEMORY_SLACK);
    await hostile.floodsDone();
    expect(hostile.written).toBeLessThan(MAX_BYTES + WRITE_SLACK);
  }

  it('JwtVerifier refuses a 1 GiB metadata document at maxResponseBytes, within its deadline, the rest never downloaded', async () => {
    hostile.routes['/.well-known/oauth-authorization-server'] = flood(hostile, GIB, false);
    const verifier = new JwtVerifier({ timeoutMs: TIMEOUT_MS, maxResponseBytes: MAX_BYTES }, mountWith(hostile.origin));

    const outcome = await measured(() => verifier.authorize(UNSIGNED_JWT));
    await expectRefusedAtTheBound(outcome, `${hostile.origin}/.well-known/oauth-authorization-server`);
  });

  it('JwtVerifier refuses a 1 GiB JWKS at maxResponseBytes before jose parses it', async () => {
    hostile.routes['/.well-known/oauth-authorization-server'] = json({
      issuer: hostile.origin,
      jwks_uri: `${hostile.origin}/jwks`,
    });
    hostile.routes['/jwks'] = flood(hostile, GIB, false);
    const verifier = new JwtVerifier({ timeoutMs: TIMEOUT_MS, maxResponseBytes: MAX_BYTES }, mountWith(hostile.origin));

    const outcome = await measured(() => verifier.authorize(UNSIGNED_JWT));
    await expectRefusedAtTheBound(outcome, `${hostile.origin}/jwks`);
  });

  it('IntrospectionVerifier refuses a 1 GiB introspection answer, declared or not, at maxResponseBytes', async () => {
    hostile.routes['POST /introspect'] = flood(hostile, GIB, true);
    const options = {
      clientId: 'rs',
      clientSecret: 'rs-secret',
      endpoint: `${hostile.origin}/introspect`,
      audience: AUDIENCE,
      timeoutMs: TIMEOUT_MS,
      maxResponseBytes: MAX_BYTES,
    };
    const declared = await measured(() =>
      new IntrospectionVerifier(options, mountWith(hostile.origin)).authorize('opaque-token'),
    );
    await expectRefusedAtTheBound(declared, `${hostile.origin}/introspect`);

    hostile.routes['POST /introspect'] = flood(hostile, GIB, false);
    hostile.written = 0;
    const chunked = await measured(() =>
      new IntrospectionVerifier(options, mountWith(hostile.origin)).authorize('opaque-token'),
    );
    await expectRefusedAtTheBound(chunked, `${hostile.origin}/introspect`);
  });

  it('IntrospectionVerifier refuses a 1 GiB metadata document when it discovers its endpoint', async () => {
    hostile.routes['/.well-known/oauth-authorization-server'] = flood(hostile, GIB, false);
    const verifier = new IntrospectionVerifier(
      { clientId: 'rs', clientSecret: 'rs-secret', timeoutMs: TIMEOUT_MS, maxResponseBytes: MAX_BYTES },
      mountWith(hostile.origin),
    );

    const outcome = await measured(() => verifier.authorize('opaque-token'));
    await expectRefusedAtTheBound(outcome, `${hostile.origin}/.well-known/oauth-authorization-server`);
  });

  it('gives up on a body that trickles in, at timeoutMs, with an McpAuthorizationServerError', async () => {
    hostile.routes['/.well-known/oauth-authorization-server'] = drip(hostile);
    const verifier = new JwtVerifier({ timeoutMs: TIMEOUT_MS, maxResponseBytes: MAX_BYTES }, mountWith(hostile.origin));

    const outcome = await measured(() => verifier.authorize(UNSIGNED_JWT));
    expect(outcome.error).toBeInstanceOf(McpAuthorizationServerError);
    expect((outcome.error as Error).message).toBe(
      `The authorization server at ${hostile.origin}/.well-known/oauth-authorization-server could not be read: the body did not arrive within ${TIMEOUT_MS} ms`,
    );
    expect(outcome.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(outcome.ms).toBeLessThan(DEADLINE_MS);
    await hostile.floodsDone();
  });

  it('turns a JWKS answer that cannot hold a key set (no body, not JSON) into an McpAuthorizationServerError', async () => {
    hostile.routes['/.well-known/oauth-authorization-server'] = json({
      issuer: hostile.origin,
      jwks_uri: `${hostile.origin}/jwks`,
    });
    hostile.routes['/jwks'] = (_req, res) => void res.writeHead(204).end();
    const empty = await new JwtVerifier({ timeoutMs: TIMEOUT_MS }, mountWith(hostile.origin))
      .authorize(UNSIGNED_JWT)
      .catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(McpAuthorizationServerError);
    expect((empty as Error).message).toBe(
      `JwtVerifier could not verify a token against the keys of ${hostile.origin}: Expected 200 OK from the JSON Web Key Set HTTP response`,
    );

    hostile.routes['/jwks'] = (_req, res) =>
      void res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"keys": [');
    const garbled = await new JwtVerifier({ timeoutMs: TIMEOUT_MS }, mountWith(hostile.origin))
      .authorize(UNSIGNED_JWT)
      .catch((e: unknown) => e);
    expect(garbled).toBeInstanceOf(McpAuthorizationServerError);
    expect((garbled as Error).message).toBe(
      `JwtVerifier could not verify a token against the keys of ${hostile.origin}: Failed to parse the JSON Web Key Set HTTP response as JSON`,
    );
  });

  it('follows no redirect from the metadata, JWKS or introspection endpoint, and says so', async () => {
    const where = `${sink.origin}/elsewhere`;
    sink.routes['/elsewhere'] = json({
      issuer: hostile.origin,
      jwks_uri: `${sink.origin}/jwks`,
      introspection_endpoint: `${sink.origin}/introspect`,
    });
    const said = (url: string, status: number) =>
      `The authorization server at ${url} answered a redirect (HTTP ${status} to ${where}); redirects are not followed`;

    hostile.routes['/.well-known/oauth-authorization-server'] = redirect(302, where);
    const discovery = await new JwtVerifier({ timeoutMs: TIMEOUT_MS }, mountWith(hostile.origin))
      .authorize(UNSIGNED_JWT)
      .catch((e: unknown) => e);
    expect(discovery).toBeInstanceOf(McpAuthorizationServerError);
    expect((discovery as Error).message).toBe(said(`${hostile.origin}/.well-known/oauth-authorization-server`, 302));

    hostile.routes['/.well-known/oauth-authorization-server'] = json({
      issuer: hostile.origin,
      jwks_uri: `${hostile.origin}/jwks`,
    });
    hostile.routes['/jwks'] = redirect(301, where);
    const jwks = await new JwtVerifier({ timeoutMs: TIMEOUT_MS }, mountWith(hostile.origin))
      .authorize(UNSIGNED_JWT)
      .catch((e: unknown) => e);
    expect(jwks).toBeInstanceOf(McpAuthorizationServerError);
    expect((jwks as Error).message).toContain(said(`${hostile.origin}/jwks`, 301));

    // A 307 would have the client credentials and the token posted again to wherever it points.
    hostile.routes['POST /introspect'] = redirect(307, where);
    const options = {
      clientId: 'rs',
      clientSecret: 'rs-secret',
      endpoint: `${hostile.origin}/introspect`,
      audience: AUDIENCE,
      timeoutMs: TIMEOUT_MS,
    };
    const introspection = await new IntrospectionVerifier(options, mountWith(hostile.origin))
      .authorize('opaque-token')
      .catch((e: unknown) => e);
    expect(introspection).toBeInstanceOf(McpAuthorizationServerError);
    expect((introspection as Error).message).toBe(said(`${hostile.origin}/introspect`, 307));

    expect(sink.hits).toEqual([]);
  });
});
