/** The conformance CLI releases we pin: one per protocol generation. */
export const CONFORMANCE_2025 = '@modelcontextprotocol/conformance@0.1.16';
export const CONFORMANCE_2026 = '@modelcontextprotocol/conformance@0.2.0-alpha.12';

/** What a suite needs to know about the run it is part of. */
export interface SuiteContext {
  /** The proxied MCP endpoint of the fixture app (adds the bearer token). */
  serverUrl: string;
  /** The proxied endpoint of the fixture's tasks mount (the tasks-extension tools). */
  tasksServerUrl: string;
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
  id: 'server-2025' | 'client-2025' | 'server-2026' | 'server-2026-tasks' | 'client-2026';
  title: string;
  /** npm package spec of the conformance CLI. */
  pkg: string;
  mode: 'server' | 'client';
  /** The protocol revision the suite exercises (`--spec-version`). */
  specVersion: '2025-11-25' | '2026-07-28';
  /**
   * Wall-clock cap of the whole suite, so a hung scenario cannot hold CI. Client suites start the
   * CLI and a client app per scenario (about 5 s a scenario, two at a time, on an idle 2-core
   * machine): their caps leave room for a machine several times busier, some 17 s a scenario.
   */
  budgetMs: number;
  invocations(context: SuiteContext): Invocation[];
}

/** Client scenarios of the 2025 generation we answer with `McpClientService`. */
export const CLIENT_2025_SCENARIOS = ['initialize', 'tools_call', 'elicitation-sep1034-client-defaults', 'sse-retry'];

/**
 * Client scenarios of 2026-07-28 (`conformance list --client --spec-version 2026-07-28`) other
 * than the OAuth ones, which follow.
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

/**
 * Every OAuth client scenario of 0.1.16 (`conformance list`): the 2025-11-25 ones, the
 * 2025-03-26 back-compat ones, the draft ones and the extensions. Each starts its own resource
 * server and authorization server; the client is configured from the credentials the scenario
 * hands out (test/conformance/client/scenario-auth.ts).
 */
export const CLIENT_2025_AUTH_SCENARIOS = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
  'auth/2025-03-26-oauth-metadata-backcompat',
  'auth/2025-03-26-oauth-endpoint-fallback',
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/client-credentials-jwt',
  'auth/client-credentials-basic',
  'auth/cross-app-access-complete-flow',
];

/**
 * The OAuth client scenarios of 0.2.0-alpha.12 that apply at 2026-07-28 (`conformance list`
 * tags them 2026-07-28). The two 2025-03-26 back-compat ones do not apply there (the CLI skips
 * them): client-2025 runs them.
 */
export const CLIENT_2026_AUTH_SCENARIOS = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/authorization-server-migration',
  'auth/iss-supported',
  'auth/iss-not-advertised',
  'auth/iss-supported-missing',
  'auth/iss-wrong-issuer',
  'auth/iss-unexpected',
  'auth/iss-normalized',
  'auth/metadata-issuer-mismatch',
];

/**
 * The OAuth extension scenarios of 0.2.0-alpha.12 (client credentials, enterprise-managed
 * authorization, DPoP, workload identity). They are on no spec timeline, so the CLI runs them
 * at `--spec-version 2026-07-28` only with `--force`; the client-credentials ones are the OAuth
 * the module's client has.
 */
export const CLIENT_2026_AUTH_EXTENSION_SCENARIOS = [
  'auth/client-credentials-jwt',
  'auth/client-credentials-basic',
  'auth/enterprise-managed-authorization',
  'auth/dpop',
  'auth/dpop-nonce',
  'auth/wif-jwt-bearer',
];

/**
 * The server scenarios of the `io.modelcontextprotocol/tasks` extension (SEP-2663) in
 * 0.2.0-alpha.12 (`conformance list --server`, tagged [extension]). Extension scenarios are on no
 * spec timeline: the CLI runs them only with `--force`, one `--scenario` per run.
 */
export const SERVER_2026_TASKS_SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-status-notifications',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
];

/** One CLI run per scenario; `force` runs scenarios the CLI deems not applicable at `specVersion`. */
function clientRuns(
  context: SuiteContext,
  scenarios: string[],
  specVersion: Suite['specVersion'],
  force = false,
): Invocation[] {
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
      ...(force ? ['--force'] : []),
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
    title: `client, ${CLIENT_2025_SCENARIOS.join(', ')} and ${CLIENT_2025_AUTH_SCENARIOS.length} OAuth scenarios (${CONFORMANCE_2025})`,
    pkg: CONFORMANCE_2025,
    mode: 'client',
    budgetMs: 480_000,
    invocations: (context) => [
      ...clientRuns(context, CLIENT_2025_SCENARIOS, '2025-11-25'),
      ...clientRuns(context, CLIENT_2025_AUTH_SCENARIOS, '2025-11-25'),
    ],
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
    id: 'server-2026-tasks',
    specVersion: '2026-07-28',
    title: `server, the ${SERVER_2026_TASKS_SCENARIOS.length} tasks-extension scenarios (--force) against the fixture's tasks mount (${CONFORMANCE_2026})`,
    pkg: CONFORMANCE_2026,
    mode: 'server',
    budgetMs: 240_000,
    invocations: (context) =>
      SERVER_2026_TASKS_SCENARIOS.map((scenario) => ({
        scenarios: [scenario],
        args: [
          'server',
          '--url',
          context.tasksServerUrl,
          '--scenario',
          scenario,
          '--spec-version',
          '2026-07-28',
          '--force',
          '--timeout',
          '30000',
          '--expected-failures',
          context.expectedFailuresFile,
          '-o',
          context.resultsDir,
        ],
      })),
  },
  {
    id: 'client-2026',
    specVersion: '2026-07-28',
    title: `client, --spec-version 2026-07-28, ${CLIENT_2026_SCENARIOS.length} scenarios, ${CLIENT_2026_AUTH_SCENARIOS.length} OAuth ones and ${CLIENT_2026_AUTH_EXTENSION_SCENARIOS.length} OAuth extensions (--force) (${CONFORMANCE_2026})`,
    pkg: CONFORMANCE_2026,
    mode: 'client',
    budgetMs: 660_000,
    invocations: (context) => [
      ...clientRuns(context, CLIENT_2026_SCENARIOS, '2026-07-28'),
      ...clientRuns(context, CLIENT_2026_AUTH_SCENARIOS, '2026-07-28'),
      ...clientRuns(context, CLIENT_2026_AUTH_EXTENSION_SCENARIOS, '2026-07-28', true),
    ],
  },
];
