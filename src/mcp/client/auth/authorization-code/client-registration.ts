import { createHash } from 'node:crypto';
import type { McpOAuthClient } from '../../../persistence/entities/oauth-client.entity';
import type { TypeOrmOAuthClientStore } from '../../../persistence/typeorm/typeorm-oauth-client.store';
import { McpConfigurationError } from '../../../errors/mcp-configuration.errors';
import { McpOAuthClientError } from '../oauth-client.errors';
import type { OAuthDiscovery } from '../oauth-discovery';
import type { AuthorizationCodeAuth } from './authorization-code.auth';
import type { McpGrantSealer } from './grant-sealer';
import { publicClientMetadata, registerClient } from './registration-request';
import type { TokenEndpointClient } from './token-endpoint-request';

/** The key of the registration row of a client registered at `issuer` with `redirectUri`. */
export function registrationKey(issuer: string, redirectUri: string): string {
  return createHash('sha256').update(`${issuer}\0${redirectUri}`).digest('hex');
}

/**
 * Which client `authorizationCode` authorizes users as at an authorization server, in the order
 * of the MCP authorization specification: the pre-registered `clientId`; else the
 * `clientMetadataUrl` when the server announces `client_id_metadata_document_supported`; else
 * a client registered at its `registration_endpoint` (RFC 7591) when `dynamicRegistration` is
 * on, registered once per issuer and redirect URI for every replica (the database keeps it).
 */
export class McpOAuthClientRegistrar {
  private readonly inFlight = new Map<string, Promise<McpOAuthClient>>();

  /** `store` is absent only where no database keeps registrations: then dynamic registration is refused. */
  constructor(
    private readonly store: TypeOrmOAuthClientStore | undefined,
    private readonly sealer: McpGrantSealer,
    private readonly redirectUri: string,
    private readonly clientName: string,
  ) {}

  /**
   * The client to send a user to the authorization server of `discovery` as.
   * @throws McpOAuthClientError when the server offers none of the ways configured, or refuses the registration
   */
  async client(auth: AuthorizationCodeAuth, discovery: OAuthDiscovery): Promise<TokenEndpointClient> {
    const { clientId, clientSecret, clientMetadataUrl, dynamicRegistration } = auth.options;
    if (clientId !== undefined) return { clientId, clientSecret };
    const user = discovery.user;
    if (clientMetadataUrl !== undefined && user?.clientIdMetadataDocuments) return { clientId: clientMetadataUrl };
    const endpoint = user?.registrationEndpoint ?? null;
    if (dynamicRegistration === true && endpoint !== null)
      return this.opened(await this.registered(auth, discovery, endpoint));
    const ways = [
      ...(clientMetadataUrl !== undefined
        ? ['a Client ID Metadata Document (client_id_metadata_document_supported)']
        : []),
      ...(dynamicRegistration === true ? ['dynamic client registration (registration_endpoint)'] : []),
    ];
    throw new McpOAuthClientError(
      `The authorization server ${discovery.issuer} supports none of the ways authorizationCode() is configured to get a client id by (${ways.join('; ')}): ` +
        'register the app there and give authorizationCode() its clientId',
    );
  }

  /**
   * The client a grant or pending authorization was issued to (`clientId`), with its secret when
   * it has one: the configured client, the Client ID Metadata Document URL, or the registered
   * client of the issuer (a registration replaced since has no secret any more).
   */
  async issuedTo(
    auth: AuthorizationCodeAuth,
    discovery: OAuthDiscovery,
    clientId: string,
  ): Promise<TokenEndpointClient> {
    if (clientId === auth.options.clientId) return { clientId, clientSecret: auth.options.clientSecret };
    const row = await this.store?.find(registrationKey(discovery.issuer, this.redirectUri));
    return row?.clientId === clientId ? this.opened(row) : { clientId };
  }

  private opened(row: McpOAuthClient): TokenEndpointClient {
    const secret =
      row.clientSecret === null ? null : this.sealer.openClientSecret(row.registrationKey, row.clientSecret);
    return secret === null ? { clientId: row.clientId } : { clientId: row.clientId, clientSecret: secret };
  }

  /** The kept registration of the issuer, registering (once per process at a time) when there is none or its secret expired. */
  private registered(
    auth: AuthorizationCodeAuth,
    discovery: OAuthDiscovery,
    endpoint: string,
  ): Promise<McpOAuthClient> {
    const store = this.store;
    if (!store)
      throw new McpConfigurationError(
        'authorizationCode({ dynamicRegistration: true }) keeps its registrations in the database (mcp_oauth_clients), and this McpOAuthService has no store of them: use it through McpClientModule with MCP_ENTITIES',
      );
    const key = registrationKey(discovery.issuer, this.redirectUri);
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.register(store, key, auth, discovery, endpoint).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async register(
    store: TypeOrmOAuthClientStore,
    key: string,
    auth: AuthorizationCodeAuth,
    discovery: OAuthDiscovery,
    endpoint: string,
  ): Promise<McpOAuthClient> {
    const kept = await store.find(key);
    if (kept && (kept.secretExpiresAt === null || kept.secretExpiresAt.getTime() > Date.now())) return kept;
    if (kept) await store.forget(kept);
    const issued = await registerClient(
      discovery.issuer,
      endpoint,
      publicClientMetadata(this.redirectUri, this.clientName),
      auth.bounds,
    );
    // Another replica may have registered meanwhile: the row kept first is the one every replica uses.
    return store.keep({
      registrationKey: key,
      issuer: discovery.issuer,
      redirectUri: this.redirectUri,
      clientId: issued.clientId,
      clientSecret: issued.clientSecret === null ? null : this.sealer.sealClientSecret(key, issued.clientSecret),
      secretExpiresAt: issued.secretExpiresAt,
      createdAt: new Date(),
    });
  }
}
