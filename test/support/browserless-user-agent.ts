import type { OAuthClientProvider as OAuthClientProvider2 } from '@modelcontextprotocol/client';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';

/**
 * Plays a user's browser through an OAuth sign-in that crosses servers: follows each redirect,
 * keeps every origin's cookies apart (the app's authorization server and the upstream identity
 * provider both set their own), sends `headers(origin)` to each origin (the test upstream signs in
 * the user named by `x-test-user`), and stops once a redirect points at `stopAt` (the MCP client's
 * redirect URI), returning that URL.
 */
export async function signInThrough(
  authorizationUrl: string,
  stopAt: string,
  headers: (origin: string) => Record<string, string> = () => ({}),
): Promise<{ url: string; hops: string[] }> {
  const jars = new Map<string, Map<string, string>>();
  const hops: string[] = [];
  let url = authorizationUrl;
  for (let hop = 0; hop < 30; hop++) {
    if (url.startsWith(stopAt)) return { url, hops };
    const origin = new URL(url).origin;
    const jar = jars.get(origin) ?? new Map<string, string>();
    jars.set(origin, jar);
    const response = await fetch(url, {
      redirect: 'manual',
      headers: { ...headers(origin), cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = response.headers.get('location');
    const text = await response.text();
    hops.push(`${response.status} ${new URL(url).pathname}`);
    if (response.status < 300 || response.status >= 400 || !location)
      throw new Error(`${url} answered ${response.status} without sending the user on: ${text.slice(0, 300)}`);
    url = new URL(location, url).href;
  }
  throw new Error(`too many redirects from ${authorizationUrl}`);
}

/** The OAuth client state an MCP SDK client's `OAuthClientProvider` keeps, in memory (it implements both the 1.x and the 2.x interface). */
export class MemoryOAuthClientProvider implements OAuthClientProvider, OAuthClientProvider2 {
  /** The authorization URL the SDK sent the user to, once it did. */
  authorizationUrl?: URL;
  private client?: { client_id: string; client_secret?: string };
  private saved?: { access_token: string; token_type: string; refresh_token?: string };
  private verifier = '';
  private discovery?: OAuthDiscoveryState;

  constructor(
    readonly redirectUrl: string,
    /** A Client ID Metadata Document URL: the SDK then uses it as its client id instead of registering. */
    readonly clientMetadataUrl?: string,
  ) {}

  get clientMetadata() {
    return {
      client_name: 'durable-mcp e2e client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation() {
    return this.client;
  }

  saveClientInformation(info: { client_id: string; client_secret?: string }): void {
    this.client = info;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: { access_token: string; token_type: string; refresh_token?: string }): void {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  /** What the 2.x client found at discovery, kept with the verifier (it checks the callback against it). */
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }
}
