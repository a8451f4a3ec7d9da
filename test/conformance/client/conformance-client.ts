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
 * (scenario-auth.ts). Set CONFORMANCE_SPEC_VERSION (e.g.
 * 2025-11-25) by hand to pin one while debugging.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { McpClientService, type McpServerConfig } from '../../../src/mcp';
import { ClientAppModule } from './client-app.module';
import { SCENARIOS, scenarioNamed } from './client-scenarios';
import { scenarioAuth, scenarioContext, scenarioIssuers } from './scenario-auth';

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
  const auth = context.client_id ? scenarioAuth(context, await scenarioIssuers(url)) : undefined;
  const app = await NestFactory.createApplicationContext(
    ClientAppModule.forTarget({ url, version, handlers: scenario.handlers, auth }),
    {
      logger: ['error', 'warn'],
    },
  );
  try {
    await scenario.run(app.get(McpClientService));
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
