import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@nestjs/common';
import type { McpAuthorizationServerModuleOptions } from './authorization-server.options';
import type { OidcProvider } from './oidc-provider.interface';
import { redirect, sendError } from './provider-http';
import type { TypeOrmProviderAdapter } from './provider-record.store';
import {
  McpUpstreamSignInError,
  newTransaction,
  type UpstreamSignIn,
  type UpstreamTransaction,
} from './upstream-sign-in';

/** How long a sign-in at the upstream provider may take, in seconds (the interaction lives as long). */
export const UPSTREAM_SIGN_IN_TTL_SEC = 600;

const LABEL_CLAIMS = ['name', 'preferred_username', 'email', 'login'];

/** The principal of an upstream user when the host gives no mapping: `<issuer>#<sub>`. */
export function defaultUpstreamPrincipal(
  claims: Record<string, unknown>,
  issuer: string,
): McpAuthorizationServerModuleOptions.Principal {
  const sub = String(claims.sub);
  const label = LABEL_CLAIMS.map((claim) => claims[claim]).find((value) => typeof value === 'string' && value !== '');
  return { key: `${issuer}#${sub}`, label: (label as string | undefined) ?? sub };
}

/**
 * The steps oidc-provider hands to the app (its interactions) and the user's way back from the
 * upstream identity provider: login goes upstream, consent is granted within the allow-list, the
 * upstream user becomes the host's principal.
 */
export class UpstreamInteractions {
  constructor(
    private readonly upstream: UpstreamSignIn,
    /** Sign-ins in progress, by their `state`. */
    private readonly upstreamSignIns: TypeOrmProviderAdapter,
    /** The principals of signed-in users, by key (`findAccount` and the tokens' claims read them). */
    private readonly accounts: TypeOrmProviderAdapter,
    private readonly principal: McpAuthorizationServerModuleOptions['principal'],
    private readonly allowedScopes: () => string[],
    /** How long a principal is kept after its last sign-in: as long as a refresh token lives. */
    private readonly accountTtlSec: number,
    private readonly logger: Logger,
  ) {}

  /**
   * The login and consent steps oidc-provider asks for: a login sends the user to the upstream
   * provider; consent is given at once for the scopes asked for within the allow-list (first-party).
   */
  async interaction(provider: OidcProvider, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      const transaction = newTransaction(details.uid);
      const { state, codeChallenge: _challenge, ...kept } = transaction;
      await this.upstreamSignIns.upsert(state, { ...kept }, UPSTREAM_SIGN_IN_TTL_SEC);
      return redirect(res, await this.upstream.authorizationUrl(transaction));
    }
    const accountId = details.session?.accountId;
    if (details.prompt.name !== 'consent' || !accountId) {
      return void (await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: `Unsupported prompt ${details.prompt.name}` },
        { mergeWithLastSubmission: false },
      ));
    }
    const account = (await this.accounts.find(accountId)) as McpAuthorizationServerModuleOptions.Principal | undefined;
    const allowed = new Set(this.allowedScopes().filter((scope) => !account?.scopes || account.scopes.includes(scope)));
    const missing = details.prompt.details;
    const requested = Object.entries(missing.missingResourceScopes ?? {});
    const denied = [...new Set(requested.flatMap(([, scopes]) => scopes.filter((scope) => !allowed.has(scope))))];
    if (denied.length > 0) {
      // oidc-provider asks again for any scope left out of the grant: refuse instead of looping.
      return void (await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: `Not granted to this user: ${denied.join(' ')}` },
        { mergeWithLastSubmission: false },
      ));
    }
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId, clientId: details.params.client_id });
    if (missing.missingOIDCScope?.length) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    for (const [indicator, scopes] of requested) grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  /**
   * The host's principal for the upstream user; a mapping that throws, or returns no key, refuses
   * the sign-in (`access_denied`; the reason goes to the log, not to the client).
   */
  private async principalOf(
    claims: Record<string, unknown>,
    issuer: string,
  ): Promise<McpAuthorizationServerModuleOptions.Principal> {
    let principal: McpAuthorizationServerModuleOptions.Principal | undefined;
    try {
      principal = await (this.principal ?? defaultUpstreamPrincipal)(claims, issuer);
    } catch (error) {
      this.logger.warn(`The principal mapping refused a user of ${issuer}: ${(error as Error).message}`);
    }
    if (!principal || typeof principal.key !== 'string' || principal.key === '')
      throw new McpUpstreamSignInError('access_denied', 'The user is not allowed here');
    return principal;
  }

  /** The user back from the upstream provider: the sign-in is checked, the principal mapped and stored. */
  async callback(provider: OidcProvider, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const query = new URL(req.url ?? '/', 'http://callback').searchParams;
    const state = query.get('state');
    const stored = state ? ((await this.upstreamSignIns.find(state)) as UpstreamTransaction | undefined) : undefined;
    if (!state || !stored) return sendError(res, 400, 'invalid_request', 'Unknown or expired sign-in (state)');
    await this.upstreamSignIns.destroy(state);
    const interaction = await provider.Interaction.find(stored.uid);
    if (!interaction) return sendError(res, 400, 'invalid_request', 'The authorization request expired; start again');
    let result: Record<string, unknown>;
    const upstreamError = query.get('error');
    const code = query.get('code');
    if (upstreamError || !code) {
      result = {
        error: upstreamError === 'access_denied' ? 'access_denied' : 'server_error',
        error_description: 'The identity provider did not sign the user in',
      };
    } else {
      try {
        const user = await this.upstream.finish(code, stored);
        const principal = await this.principalOf(user.claims, user.issuer);
        await this.accounts.upsert(
          principal.key,
          {
            key: principal.key,
            label: principal.label || principal.key,
            ...(principal.scopes ? { scopes: principal.scopes } : {}),
            roles: principal.roles ?? [],
          },
          this.accountTtlSec,
        );
        result = { login: { accountId: principal.key } };
      } catch (error) {
        if (!(error instanceof McpUpstreamSignInError)) throw error;
        this.logger.warn(`Upstream sign-in refused: ${error.message}`);
        result = { error: error.code, error_description: error.message };
      }
    }
    interaction.result = result;
    await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
    redirect(res, interaction.returnTo);
  }
}
