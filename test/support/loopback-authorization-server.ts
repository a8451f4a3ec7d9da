import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the registration endpoint of a realm answers a registration with. */
export type RegistrationAnswer = { status: number; body: Record<string, unknown> | string };

/** One authorization server of the loopback server, at `<base>/<name>` (its issuer). */
export interface LoopbackRealm {
  /** Announces `client_id_metadata_document_supported: true`, and accepts https-URL client ids by fetching their document. */
  clientIdMetadataDocuments?: boolean;
  /**
   * How the registration endpoint answers (`<issuer>/register`, announced unless `false`): by
   * default it registers a public client. A client answered with a `client_id` is registered.
   */
  register?: false | ((metadata: Record<string, unknown>, count: number) => RegistrationAnswer);
  /** Announces this registration endpoint instead of its own. */
  registrationEndpoint?: string;
  /**
   * Serves a Protected Resource Metadata document for `<issuer>/mcp` naming this realm as its
   * authorization server (a resource without an MCP server behind it, for flows that fail before a call).
   */
  protectedResource?: boolean;
}

/** A client the loopback server knows: registered at a realm, or known by its metadata document. */
interface KnownClient {
  redirectUris: string[];
  secret: string | null;
}

/** What the loopback server saw, for the assertions. */
export interface LoopbackRecord {
  /** Every registration request: its realm, the metadata sent, and the client id issued (or null). */
  registrations: Array<{ realm: string; metadata: Record<string, unknown>; clientId: string | null }>;
  /** The Client ID Metadata Documents fetched, with what each answered. */
  documentFetches: Array<{ url: string; status: number; document: Record<string, unknown> | null }>;
  /** Every token request: realm, grant type, the client id, and whether it authenticated with a secret (Basic). */
  tokenRequests: Array<{ realm: string; grantType: string; clientId: string; basic: boolean }>;
}

/**
 * A small real OAuth authorization server on loopback, for what oidc-provider does not offer:
 * Client ID Metadata Documents (it fetches the client's document from the client's route and
 * checks `client_id` and the redirect URI), registration endpoints that refuse or issue
 * secrets, metadata pointing elsewhere. Several realms (issuers `<base>/<name>`) share one port.
 * Authorization code with PKCE (S256) and rotated refresh tokens; opaque access tokens, which
 * `accessTokens` maps to the user who authorized (a resource server's authorizer reads it).
 * The authorization endpoint signs in the user named by the `x-test-user` header at once.
 */
export class LoopbackAuthorizationServer {
  readonly record: LoopbackRecord = { registrations: [], documentFetches: [], tokenRequests: [] };
  /** Issued access tokens: who authorized, for which client. */
  readonly accessTokens = new Map<string, { user: string; clientId: string }>();
  private readonly clients = new Map<string, KnownClient>();
  private readonly codes = new Map<
    string,
    { realm: string; clientId: string; redirectUri: string; challenge: string; user: string; scope: string }
  >();
  private readonly refreshTokens = new Map<string, { realm: string; clientId: string; user: string; scope: string }>();
  private readonly server = createServer((req, res) => {
    this.handle(req, res).catch((error: unknown) => {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(error));
    });
  });
  base = '';

  constructor(private readonly realms: Record<string, LoopbackRealm>) {}

  /** Listens on a free loopback port. */
  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** The issuer identifier of a realm. */
  issuer(realm: string): string {
    return `${this.base}/${realm}`;
  }

  /**
   * Plays the user's browser: opens the authorization URL as `user`, follows the redirect to the
   * client's callback, and answers what the callback answered.
   */
  async authorize(authorizationUrl: string, user: string): Promise<{ status: number; text: string }> {
    const answer = await fetch(authorizationUrl, { redirect: 'manual', headers: { 'x-test-user': user } });
    const location = answer.headers.get('location');
    if (answer.status !== 302 || !location) return { status: answer.status, text: await answer.text() };
    await answer.body?.cancel();
    const callback = await fetch(location, { redirect: 'manual' });
    return { status: callback.status, text: await callback.text() };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url as string, this.base);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      res
        .writeHead(status, { 'Content-Type': 'application/json', ...headers })
        .end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    const asMetadata = /^\/\.well-known\/oauth-authorization-server\/([^/]+)$/.exec(url.pathname);
    if (asMetadata && this.realms[asMetadata[1]]) return json(200, this.metadata(asMetadata[1]));
    const prm = /^\/\.well-known\/oauth-protected-resource\/([^/]+)\/mcp$/.exec(url.pathname);
    if (prm && this.realms[prm[1]]?.protectedResource)
      return json(200, { resource: `${this.issuer(prm[1])}/mcp`, authorization_servers: [this.issuer(prm[1])] });
    const [, realm, endpoint] = /^\/([^/]+)\/([^/]+)$/.exec(url.pathname) ?? [];
    const config = realm ? this.realms[realm] : undefined;
    if (!config) return json(404, { error: 'not_found' });
    if (endpoint === 'register' && req.method === 'POST' && config.register !== false) {
      const metadata = JSON.parse(await body(req)) as Record<string, unknown>;
      const count = this.record.registrations.filter((r) => r.realm === realm).length;
      const answer: RegistrationAnswer = config.register?.(metadata, count) ?? {
        status: 201,
        body: { client_id: randomId() },
      };
      const issued = typeof answer.body === 'object' && typeof answer.body.client_id === 'string' ? answer.body : null;
      this.record.registrations.push({ realm, metadata, clientId: issued ? (issued.client_id as string) : null });
      if (issued && answer.status === 201) {
        this.clients.set(`${realm}\0${issued.client_id as string}`, {
          redirectUris: metadata.redirect_uris as string[],
          secret: typeof issued.client_secret === 'string' ? issued.client_secret : null,
        });
        return json(201, { ...metadata, ...issued });
      }
      return json(answer.status, answer.body);
    }
    if (endpoint === 'authorize' && req.method === 'GET') return this.authorizeEndpoint(realm, url, req, res);
    if (endpoint === 'token' && req.method === 'POST') return this.tokenEndpoint(realm, req, json);
    return json(404, { error: 'not_found' });
  }

  private metadata(realm: string): Record<string, unknown> {
    const config = this.realms[realm];
    const issuer = this.issuer(realm);
    return {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_basic'],
      ...(config.register !== false
        ? { registration_endpoint: config.registrationEndpoint ?? `${issuer}/register` }
        : {}),
      ...(config.clientIdMetadataDocuments ? { client_id_metadata_document_supported: true } : {}),
    };
  }

  /** The client of a client id: registered at the realm, or (a URL) known by its metadata document, fetched now. */
  private async client(realm: string, clientId: string): Promise<KnownClient | null> {
    const registered = this.clients.get(`${realm}\0${clientId}`);
    if (registered) return registered;
    if (!this.realms[realm].clientIdMetadataDocuments || !URL.canParse(clientId)) return null;
    const answer = await fetch(clientId, { headers: { Accept: 'application/json' }, redirect: 'error' });
    const document = answer.ok ? ((await answer.json()) as Record<string, unknown>) : null;
    this.record.documentFetches.push({ url: clientId, status: answer.status, document });
    if (!document || document.client_id !== clientId || document.token_endpoint_auth_method !== 'none') return null;
    return { redirectUris: document.redirect_uris as string[], secret: null };
  }

  private async authorizeEndpoint(realm: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const param = (name: string) => url.searchParams.get(name) ?? '';
    const client = await this.client(realm, param('client_id'));
    const redirectUri = param('redirect_uri');
    if (!client || !client.redirectUris.includes(redirectUri) || param('code_challenge_method') !== 'S256') {
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end('invalid_client or invalid_request');
      return;
    }
    const code = randomId();
    this.codes.set(code, {
      realm,
      clientId: param('client_id'),
      redirectUri,
      challenge: param('code_challenge'),
      user: String(req.headers['x-test-user'] ?? 'anonymous'),
      scope: param('scope'),
    });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    back.searchParams.set('state', param('state'));
    back.searchParams.set('iss', this.issuer(realm));
    res.writeHead(302, { Location: back.href }).end();
  }

  private async tokenEndpoint(
    realm: string,
    req: IncomingMessage,
    json: (status: number, body: unknown, headers?: Record<string, string>) => void,
  ): Promise<void> {
    const form = new URLSearchParams(await body(req));
    const authorization = req.headers.authorization ?? '';
    const [basicId, basicSecret] = authorization.startsWith('Basic ')
      ? Buffer.from(authorization.slice(6), 'base64')
          .toString()
          .split(':')
          .map((part) => decodeURIComponent(part.replace(/\+/g, ' ')))
      : [];
    const clientId = basicId ?? form.get('client_id') ?? '';
    const grantType = form.get('grant_type') ?? '';
    this.record.tokenRequests.push({ realm, grantType, clientId, basic: basicId !== undefined });
    const client = await this.client(realm, clientId);
    if (!client || (client.secret ?? undefined) !== basicSecret) return json(401, { error: 'invalid_client' });
    let grant: { user: string; scope: string };
    if (grantType === 'authorization_code') {
      const code = this.codes.get(form.get('code') ?? '');
      this.codes.delete(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (
        !code ||
        code.realm !== realm ||
        code.clientId !== clientId ||
        code.redirectUri !== form.get('redirect_uri') ||
        code.challenge !== challenge
      )
        return json(400, { error: 'invalid_grant' });
      grant = code;
    } else if (grantType === 'refresh_token') {
      const refresh = this.refreshTokens.get(form.get('refresh_token') ?? '');
      this.refreshTokens.delete(form.get('refresh_token') ?? '');
      if (!refresh || refresh.realm !== realm || refresh.clientId !== clientId)
        return json(400, { error: 'invalid_grant' });
      grant = refresh;
    } else {
      return json(400, { error: 'unsupported_grant_type' });
    }
    const accessToken = randomId();
    const refreshToken = randomId();
    this.accessTokens.set(accessToken, { user: grant.user, clientId });
    this.refreshTokens.set(refreshToken, { realm, clientId, user: grant.user, scope: grant.scope });
    return json(
      200,
      {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: 600,
        refresh_token: refreshToken,
        scope: grant.scope,
      },
      { 'Cache-Control': 'no-store' },
    );
  }
}

function randomId(): string {
  return randomBytes(16).toString('base64url');
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString()));
    req.on('error', reject);
  });
}
