import { type McpClientHandlers, type McpClientService } from '../../../src/mcp';
import { McpCapabilityError } from '../../../src/mcp/errors';
import { TARGET } from './client-app.module';

/** What the client does for one conformance scenario. */
export interface ClientScenario {
  /** Answers to server->client requests the scenario makes. */
  handlers?: McpClientHandlers;
  run(client: McpClientService): Promise<void>;
}

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
};

/** A plausible value for a JSON Schema, the way a model filling in arguments would pick one. */
function sampleValue(schema: Schema | undefined): unknown {
  if (schema?.default !== undefined) return schema.default;
  if (schema?.enum?.length) return schema.enum[0];
  const type = Array.isArray(schema?.type) ? schema?.type[0] : schema?.type;
  switch (type) {
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return sampleObject(schema);
    default:
      return 'test';
  }
}

/** Values for the required properties of an object schema. */
function sampleObject(schema: Schema | undefined): Record<string, unknown> {
  return Object.fromEntries((schema?.required ?? []).map((name) => [name, sampleValue(schema?.properties?.[name])]));
}

/** A user who accepts every form, filling each field as `sampleValue` would. */
const handlers: McpClientHandlers = {
  elicitation: (params) => {
    const schema = params.requestedSchema as Schema | undefined;
    return {
      action: 'accept',
      content: Object.fromEntries(
        Object.entries(schema?.properties ?? {}).map(([name, field]) => [name, sampleValue(field)]),
      ),
    };
  },
  sampling: () => ({
    role: 'assistant',
    content: { type: 'text', text: 'The capital of France is Paris.' },
    model: 'conformance-model',
    stopReason: 'endTurn',
  }),
  roots: () => ({ roots: [{ uri: 'file:///conformance/root', name: 'Conformance root' }] }),
};

async function attempt(label: string, failures: string[], work: () => Promise<unknown>): Promise<void> {
  try {
    const value = await work();
    if (value !== undefined) console.log(`${label} -> ${JSON.stringify(value).slice(0, 500)}`);
  } catch (error) {
    if (error instanceof McpCapabilityError) return console.log(`${label}: skipped (${error.message})`);
    failures.push(`${label}: ${(error as Error).message}`);
    console.error(`${label} failed: ${(error as Error).message}`);
  }
}

/** How `exerciseServer` makes each request: as whom, and what wraps it (a user's sign-in). */
export interface ExerciseOptions {
  /** The user of every call (servers with `scope: 'principal'`). */
  scopeKey?: string;
  /** Runs one request; the user-delegated OAuth scenarios sign the user in and run it again. */
  run?: <T>(request: () => Promise<T>) => Promise<T>;
}

/**
 * What a generic agent does with a server it meets: list the tools and call each one, list the
 * resources and read each one, list the prompts and get each one, each with plausible arguments.
 * Tools the client library refused to list are, by construction, never called.
 */
export async function exerciseServer(client: McpClientService, exercise: ExerciseOptions = {}): Promise<void> {
  const failures: string[] = [];
  const options = exercise.scopeKey === undefined ? {} : { scopeKey: exercise.scopeKey };
  const run = exercise.run ?? (<T>(request: () => Promise<T>) => request());
  await attempt('tools', failures, async () => {
    for (const tool of await run(() => client.listTools(TARGET, options))) {
      await attempt(`tools/call ${tool.name}`, failures, () =>
        run(() => client.callTool(TARGET, tool.name, sampleObject(tool.inputSchema), options)),
      );
    }
  });
  await attempt('resources', failures, async () => {
    for (const resource of await run(() => client.listResources(TARGET, options))) {
      await attempt(`resources/read ${String(resource.uri)}`, failures, () =>
        run(() => client.readResource(TARGET, String(resource.uri), options)),
      );
    }
  });
  await attempt('prompts', failures, async () => {
    for (const prompt of await run(() => client.listPrompts(TARGET, options))) {
      const args = ((prompt.arguments as { name: string; required?: boolean }[] | undefined) ?? []).filter(
        (arg) => arg.required,
      );
      await attempt(`prompts/get ${String(prompt.name)}`, failures, () =>
        run(() =>
          client.getPrompt(
            TARGET,
            String(prompt.name),
            Object.fromEntries(args.map((arg) => [arg.name, 'test'])),
            options,
          ),
        ),
      );
    }
  });
  if (failures.length) throw new Error(`Some requests failed:\n  ${failures.join('\n  ')}`);
}

/** Lists the tools, then calls `name` (the scenario server checks what reached it). */
async function callListedTool(
  client: McpClientService,
  name: string,
  args: Record<string, unknown> = {},
): Promise<void> {
  const tools = await client.listTools(TARGET);
  if (!tools.some((tool) => tool.name === name)) {
    throw new Error(`The scenario server does not list ${name} (tools: ${tools.map((tool) => tool.name).join(', ')})`);
  }
  console.log(`${name} -> ${JSON.stringify(await client.callTool(TARGET, name, args))}`);
}

/** Client scenarios by name (MCP_CONFORMANCE_SCENARIO); the same name may serve both revisions. */
export const SCENARIOS: Record<string, ClientScenario> = {
  /** The handshake only: `ping` opens the session (initialize + initialized) first. */
  initialize: {
    run: (client) => client.ping(TARGET),
  },

  /** `add_numbers` with two numbers (2025 session or 2026-07-28 stateless). */
  tools_call: {
    run: (client) => callListedTool(client, 'add_numbers', { a: 5, b: 3 }),
  },

  /**
   * SEP-1034: the server elicits a form whose fields all carry defaults; the user accepts without
   * touching anything. Our handler answers as such a user would (accept, no content): filling in
   * the schema's defaults is the client library's job.
   */
  'elicitation-sep1034-client-defaults': {
    handlers: { elicitation: () => ({ action: 'accept', content: {} }) },
    run: (client) => callListedTool(client, 'test_client_elicitation_defaults'),
  },

  /**
   * SEP-1699: the server closes the tools/call SSE stream after a priming event with
   * `retry: 500`; the client must wait that long, resume with GET + Last-Event-ID and read the
   * result from the new stream.
   */
  'sse-retry': {
    run: (client) => callListedTool(client, 'test_reconnection'),
  },

  /** SEP-2575: `_meta` (protocolVersion, clientCapabilities, clientInfo) and the version header on every request. */
  'request-metadata': { handlers, run: exerciseServer },

  /** SEP-2322: echo requestState unchanged, omit it when none was given, keep rounds of different calls apart. */
  'sep-2322-client-request-state': { handlers, run: exerciseServer },

  /** SEP-2243: Mcp-Method on every POST, Mcp-Name on tools/call, resources/read and prompts/get. */
  'http-standard-headers': { handlers, run: exerciseServer },

  /** SEP-2243: parameters annotated `x-mcp-header` are mirrored into Mcp-Param-* headers, Base64 where unsafe. */
  'http-custom-headers': {
    handlers,
    run: async (client) => {
      await callListedTool(client, 'test_custom_headers', {
        region: 'us-west-1',
        priority: 5,
        verbose: false,
        debug: true,
        empty_val: '',
        method_val: 'custom-method',
        float_val: 1.5,
        non_ascii_val: 'Grüße 日本',
        whitespace_val: '  padded  ',
        leading_space_val: ' leading',
        trailing_space_val: 'trailing ',
        internal_space_val: 'internal spaces only',
        control_char_val: 'bell\u0007char',
        crlf_val: 'line1\r\nline2',
        tab_val: '\tindented',
        query: 'not mirrored',
      });
      await callListedTool(client, 'test_custom_headers_null', {
        region: 'eu-central-1',
        priority: 1,
        verbose: null,
        query: 'null verbose',
      });
    },
  },

  /** SEP-2243: tools with invalid x-mcp-header annotations are left out; the valid one is still used. */
  'http-invalid-tool-headers': { handlers, run: exerciseServer },

  /** SEP-2106: listing a tool whose schema `$ref`s a network URL must not fetch it (the scenario server serves tools/list only). */
  'json-schema-ref-no-deref': {
    run: async (client) =>
      console.log(`tools: ${(await client.listTools(TARGET)).map((tool) => tool.name).join(', ')}`),
  },

  /** SEP-1613/2106: the input schema the client received goes back verbatim through the echo tool. */
  'json-schema-2020-12-preservation': {
    handlers,
    run: async (client) => {
      const tools = await client.listTools(TARGET);
      const focal = tools.find((tool) => tool.name === 'json_schema_2020_12_tool');
      if (!focal)
        throw new Error(`json_schema_2020_12_tool is not listed (tools: ${tools.map((tool) => tool.name).join(', ')})`);
      await callListedTool(client, 'json_schema_echo', { schema: focal.inputSchema });
    },
  },
};

/**
 * Every OAuth scenario (auth/*): the scenario's resource server lists and serves `test-tool`
 * behind a bearer guard; what is checked is how the client got its token (discovery, grant,
 * client authentication, resource, scopes). The client is configured from the scenario's
 * context (scenario-auth.ts) and does what any caller does: list the tools and call each.
 */
export const AUTH_SCENARIO: ClientScenario = { run: exerciseServer };

/** The scenario called `name`, or undefined. */
export function scenarioNamed(name: string): ClientScenario | undefined {
  return SCENARIOS[name] ?? (name.startsWith('auth/') ? AUTH_SCENARIO : undefined);
}
