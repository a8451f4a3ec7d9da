
/** The conformance CLI releases we pin: one per protocol generation. */
export const CONFORMANCE_2025 = '@modelcontextprotocol/conformance@0.1.16';
export const CONFORMANCE_2026 = '@modelcontextprotocol/conformance@0.2.0-alpha.12';

/** What a suite needs to know about the run it is part of. */
export interface SuiteContext {
  /** The proxied MCP endpoint of the fixture app (adds the bearer token). */
  serverUrl: string;
  /** The client command the CLI runs for client scenarios (it appends the server URL). */
  clientCommand: string;
  /** Where this suite's `-o` results go. */
  resultsDir: string;
  /** Absolute path of this suite's expected-failures file. */
  expectedFailuresFile: string;
}

/** One CLI invocation of a suite. */
export interface Invocation {
  /** Arguments after `conformance`. */
  args: string[];
  /** Scenarios this invocation runs, when known in advance (client runs). */
  scenarios?: string[];
}

/** A suite of `npm run conformance`. */
export interface Suite {
  id: 'server-2025' | 'client-2025' | 'server-2026' | 'client-2026';
  title: string;
  /** npm package spec of the conformance CLI. */
  pkg: string;
  mode: 'server' | 'client';
  /** The protocol revision the suite exercises (`--spec-version`). */
  specVersion: '2025-11-25' | '2026-07-28';
  /**
   * Wall-clock cap of the whole suite, so a hung scenario cannot hold CI. Client suites start a
   * ts-node client per scenario, which takes seconds on a loaded 2-core machine: their caps leave
   * room for that.
   */
  budgetMs: number;
  invocations(context: SuiteContext): Invocation[];
}

/** Client scenarios of the 2025 generation we answer with `McpClientService`. */
export const CLIENT_2025_SCENARIOS = ['initialize', 'tools_call', 'elicitation-sep1034-client-defaults', 'sse-retry'];

/**
 * Client scenarios of 2026-07-28 (`conformance list --client --spec-version 2026-07-28`), minus
 * the OAuth ones (`auth/*`): the module's client has static bearer tokens, no OAuth flow.
 */
export const CLIENT_2026_SCENARIOS = [
  'tools_call',
  'request-metadata',
  'sep-2322-client-request-state',
  'http-standard-headers',
  'http-custom-headers',
  'http-invalid-tool-headers',
  'json-schema-ref-no-deref',
  'json-schema-2020-12-preservation',
];

function clientRuns(context: SuiteContext, scenarios: string[], specVersion: Suite['specVersion']): Invocation[] {
  return scenarios.map((scenario) => ({
    scenarios: [scenario],
    args: [
      'client',
      '--command',
      context.clientCommand,
      '--scenario',
      scenario,
      '--spec-version',
      specVersion,
      '--timeout',
      '30000',
      '--expected-failures',
      context.expectedFailuresFile,
      '-o',
      context.resultsDir,
    ],
  }));
}

/** Every suite, in the order they run. */
export const SUITES: Suite[] = [
  {
    id: 'server-2025',
    specVersion: '2025-11-25',
    title: `server, --suite all --spec-version 2025-11-25 (${CONFORMANCE_2025})`,
    pkg: CONFORMANCE_2025,
    mode: 'server',
    budgetMs: 100_000,
    invocations: (context) => [
      {
        args: [
          'server',
          '--url',
          context.serverUrl,
          '--suite',
          'all',
          '--spec-version',
          '2025-11-25',
          '--expected-failures',
          context.expectedFailuresFile,
          '-o',
          context.resultsDir,
        ],
      },
    ],
  },
  {
    id: 'client-2025',
    specVersion: '2025-11-25',
    title: `client, ${CLIENT_2025_SCENARIOS.join(', ')} (${CONFORMANCE_2025})`,
    pkg: CONFORMANCE_2025,
    mode: 'client',
    budgetMs: 120_000,
    invocations: (context) => clientRuns(context, CLIENT_2025_SCENARIOS, '2025-11-25'),
  },
  {
    id: 'server-2026',
    specVersion: '2026-07-28',
    title: `server, --suite all --spec-version 2026-07-28 (${CONFORMANCE_2026})`,
    pkg: CONFORMANCE_2026,
    mode: 'server',
    budgetMs: 70_000,
    invocations: (context) => [
      {
        args: [
          'server',
          '--url',
          context.serverUrl,
          '--suite',
          'all',
          '--spec-version',
          '2026-07-28',
          '--timeout',
          '15000',
          '--expected-failures',
          context.expectedFailuresFile,
          '-o',
          context.resultsDir,
        ],
      },
    ],
  },
  {
    id: 'client-2026',
    specVersion: '2026-07-28',
    title: `client, --spec-version 2026-07-28, ${CLIENT_2026_SCENARIOS.length} non-OAuth scenarios (${CONFORMANCE_2026})`,
    pkg: CONFORMANCE_2026,
    mode: 'client',
    budgetMs: 150_000,
    invocations: (context) => clientRuns(context, CLIENT_2026_SCENARIOS, '2026-07-28'),
  },
];
