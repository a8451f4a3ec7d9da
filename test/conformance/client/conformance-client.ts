/**
 * The client under test for the conformance CLI's client scenarios:
 *
 *   conformance client --command "node -r test/support/ts-register.js .../conformance-client.ts" --scenario <name>
 *
 * The CLI appends the scenario server's URL and sets MCP_CONFORMANCE_SCENARIO. This script boots
 * a client-only Nest app (McpClientModule.forRoot(...)) and does with
 * McpClientService what the scenario expects. The server entry is what a user would write,
 * `{ url }`: the client probes the revision (`version: 'auto'`) like in production. OAuth
 * scenarios (auth/*) that hand out credentials in MCP_CONFORMANCE_CONTEXT get them as
 * `auth: clientCredentials(...)`, trusting the authorization server the scenario's server names
 * (scenario-auth.ts); the others get user-delegated OAuth (`authorizationCode`, with dynamic
 * registration or a Client ID Metadata Document), and a browserless user agent signs the user in
 * whenever the client says the user must authorize (user-agent.ts). Set CONFORMANCE_SPEC_VERSION (e.g.
 * 2025-11-25) by hand to pin one while debugging.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import { McpClientService, McpOAuthService, type McpServerConfig } from '../../../src/mcp';
import { ClientAppModule } from './client-app.module';
import { exerciseServer, SCENARIOS, scenarioNamed } from './client-scenarios';
import { scenarioAuth, scenarioContext, scenarioIssuers, scenarioUserAuth } from './scenario-auth';
import { CONFORMANCE_USER, withSignIn } from './user-agent';

/**
 * Where the authorization server sends the user back: the user agent (user-agent.ts) stops at
 * it and completes the authorization itself, so nothing listens there.
 */
const REDIRECT_URI = 'http://127.0.0.1:9/conformance/oauth/callback';

async function main(): Promise<number> {
  const url = process.argv[process.argv.length - 1];
  const name = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  const scenario = scenarioNamed(name);
  if (!url || !/^https?:\/\//.test(url)) {
    console.error(`usage: conformance-client.ts <server-url> (got ${JSON.stringify(url)})`);
    return 2;
  }
  if (!scenario) {
    console.error(
      `Unknown MCP_CONFORMANCE_SCENARIO "${name}"; this client knows: ${Object.keys(SCENARIOS).join(', ')} and auth/*`,
    );
    return 2;
  }
  const version = (process.env.CONFORMANCE_SPEC_VERSION || 'auto') as NonNullable<McpServerConfig['version']>;
  const context = scenarioContext(process.env.MCP_CONFORMANCE_CONTEXT);
  const issuers = name.startsWith('auth/') ? await scenarioIssuers(url) : [];
  const machineAuth = context.client_id ? scenarioAuth(context, issuers) : undefined;
  // No client credentials to hold: the user signs in (authorization code with PKCE).
  const userAuth = name.startsWith('auth/') && !machineAuth ? scenarioUserAuth(context, issuers) : undefined;
  const userOAuth = userAuth
    ? { redirectUri: REDIRECT_URI, encryptionKeys: [{ id: 'conformance', key: randomBytes(32).toString('base64') }] }
    : undefined;
  const app = await NestFactory.createApplicationContext(
    ClientAppModule.forTarget({ url, version, handlers: scenario.handlers, auth: machineAuth ?? userAuth, userOAuth }),
    {
      logger: ['error', 'warn'],
    },
  );
  try {
    const client = app.get(McpClientService);
    if (userAuth)
      await exerciseServer(client, {
        scopeKey: CONFORMANCE_USER,
        run: withSignIn(app.get(McpOAuthService), REDIRECT_URI),
      });
    else await scenario.run(client);
    return 0;
  } finally {
    await app.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(
      `Scenario ${process.env.MCP_CONFORMANCE_SCENARIO} failed: ${(error as Error)?.stack ?? String(error)}`,
    );
    process.exit(1);
  },
);
