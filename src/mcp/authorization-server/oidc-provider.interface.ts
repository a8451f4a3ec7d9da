import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The parts of oidc-provider (which ships no TypeScript types) the module uses, written out so
 * that the calls are checked.
 */

/** A Node request handler. */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

/** What a login or consent step is about (`provider.interactionDetails`). */
export interface InteractionDetails {
  uid: string;
  prompt: {
    name: string;
    details: { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
  };
  params: Record<string, string | undefined>;
  session?: { accountId: string };
  grantId?: string;
}

/** A stored interaction (`provider.Interaction.find`). */
export interface InteractionRecord {
  exp: number;
  returnTo: string;
  result?: Record<string, unknown>;
  save(ttlSec: number): Promise<string>;
}

/** A grant of scopes to a client for an account. */
export interface GrantRecord {
  addOIDCScope(scope: string): void;
  addResourceScope(resource: string, scope: string): void;
  save(): Promise<string>;
}

/** A client, as oidc-provider hands it to the hooks. */
export interface ProviderClient {
  grantTypeAllowed(grantType: string): boolean;
}

/** An instance of oidc-provider's `Provider`. */
export interface OidcProvider {
  proxy: boolean;
  callback(): NodeHandler;
  on(event: 'server_error', listener: (ctx: unknown, error: Error) => void): unknown;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
  interactionFinished(
    req: IncomingMessage,
    res: ServerResponse,
    result: Record<string, unknown>,
    options: { mergeWithLastSubmission: boolean },
  ): Promise<void>;
  Grant: { new (init: { accountId: string; clientId?: string }): GrantRecord; find(id: string): Promise<GrantRecord> };
  Interaction: { find(uid: string): Promise<InteractionRecord | undefined> };
}

/** The `oidc-provider` package as `require()` gives it. */
export interface OidcProviderPackage {
  default?: new (issuer: string, configuration: Record<string, unknown>) => OidcProvider;
  Provider: new (issuer: string, configuration: Record<string, unknown>) => OidcProvider;
  errors: { InvalidTarget: new (description: string) => Error };
}
