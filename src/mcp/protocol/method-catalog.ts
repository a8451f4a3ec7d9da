/**
 * What this package knows about each MCP method, in one table: who sends it, the capability it
 * needs, the revision families it exists in, and how the stateless revision and the client's
 * retries treat it. Every other place that needs such a fact reads it here. Pure TypeScript.
 */
import { McpMethod, type McpMethodName } from './mcp-methods';
import { isSupportedSessionVersion } from './revisions';
import { isStatelessVersion } from './stateless';

/** One side of an MCP connection. */
export type McpParty = 'client' | 'server';

/**
 * A family of protocol revisions: `session` for the handshake revisions (2025-03-26 to
 * 2025-11-25), `stateless` for 2026-07-28 and its successors.
 */
export type McpRevisionFamily = 'session' | 'stateless';

/** A capability the receiver of a request must have declared before it is sent. */
export interface McpCapabilityRequirement {
  /** Whose declaration counts: the server's for client->server requests, the client's otherwise. */
  holder: McpParty;
  /** The top-level capability, e.g. `resources`. */
  name: string;
  /** A flag of that capability that must be `true` as well, e.g. `subscribe` for `resources.subscribe`. */
  sub?: string;
}

/** The facts of one MCP method. */
export interface McpMethodFacts {
  /** The method name. */
  method: McpMethodName;
  /** A request (answered) or a notification (not). */
  kind: 'request' | 'notification';
  /** Who may send it; `ping`, progress and cancellation go both ways. */
  senders: readonly McpParty[];
  /** The capability it needs, or null when it needs none. */
  capability: McpCapabilityRequirement | null;
  /** The revision families it exists in. */
  revisions: readonly McpRevisionFamily[];
  /** True when a stateless server may answer it with an `input_required` result. */
  inputRequired: boolean;
  /** True when its complete stateless result carries caching hints (`ttlMs`, `cacheScope`). */
  cacheable: boolean;
  /** The `params` field the `Mcp-Name` routing header mirrors, or null when it has no such header. */
  nameSource: 'name' | 'uri' | 'taskId' | null;
  /**
   * True when sending it again does no harm (it reads, lists, or sets a state to the same value),
   * so the client may retry it after a failure that may have delivered it. Notifications are.
   */
  idempotent: boolean;
}

type Entry = Omit<McpMethodFacts, 'method'>;

const CLIENT: readonly McpParty[] = ['client'];
const SERVER: readonly McpParty[] = ['server'];
const BOTH_PARTIES: readonly McpParty[] = ['client', 'server'];
const SESSION: readonly McpRevisionFamily[] = ['session'];
const STATELESS: readonly McpRevisionFamily[] = ['stateless'];
const EVERY_REVISION: readonly McpRevisionFamily[] = ['session', 'stateless'];

function server(name: string, sub?: string): McpCapabilityRequirement {
  return sub === undefined ? { holder: 'server', name } : { holder: 'server', name, sub };
}

function client(name: string): McpCapabilityRequirement {
  return { holder: 'client', name };
}

interface RequestFacts {
  from: readonly McpParty[];
  on: readonly McpRevisionFamily[];
  needs?: McpCapabilityRequirement;
  inputRequired?: true;
  cacheable?: true;
  nameFrom?: 'name' | 'uri' | 'taskId';
  idempotent: boolean;
}

function request(facts: RequestFacts): Entry {
  return {
    kind: 'request',
    senders: facts.from,
    capability: facts.needs ?? null,
    revisions: facts.on,
    inputRequired: facts.inputRequired ?? false,
    cacheable: facts.cacheable ?? false,
    nameSource: facts.nameFrom ?? null,
    idempotent: facts.idempotent,
  };
}

function notification(from: readonly McpParty[], on: readonly McpRevisionFamily[]): Entry {
  return {
    kind: 'notification',
    senders: from,
    capability: null,
    revisions: on,
    inputRequired: false,
    cacheable: false,
    nameSource: null,
    idempotent: true,
  };
}

/*
 * The table. Notes on the entries that are not obvious:
 * - `initialize` is not idempotent: each one opens another session on the server.
 * - The session-only requests of the stateless revision: the handshake and `ping` are gone
 *   (`server/discover` replaces both), the log level travels in `_meta`, and resource
 *   subscriptions are a `subscriptions/listen` filter.
 * - Server->client requests exist on the stateless revision too: they travel inside an
 *   `input_required` result's `inputRequests` instead of as requests of their own.
 * - Task methods: `tasks/result` and `tasks/list` are 2025-11-25 vocabulary; `tasks/get` and
 *   `tasks/cancel` exist on both families (on 2026-07-28 as the `io.modelcontextprotocol/tasks`
 *   extension, with `tasks/update`, whose `Mcp-Name` header mirrors `taskId`). Their capability
 *   is per request type or an extension, so none is required here.
 * - `tasks/cancel` is not idempotent: a second one is refused once the task has ended.
 * - `subscriptions/listen` is not idempotent: each one opens another long-lived stream.
 */
const TABLE: { readonly [M in McpMethodName]: Entry } = {
  [McpMethod.Initialize]: request({ from: CLIENT, on: SESSION, idempotent: false }),
  [McpMethod.Ping]: request({ from: BOTH_PARTIES, on: SESSION, idempotent: true }),
  [McpMethod.ServerDiscover]: request({ from: CLIENT, on: STATELESS, cacheable: true, idempotent: true }),
  [McpMethod.ToolsList]: request({
    from: CLIENT,
    on: EVERY_REVISION,
    needs: server('tools'),
    cacheable: true,
    idempotent: true,
  }),
  [McpMethod.ToolsCall]: request({
    from: CLIENT,
    on: EVERY_REVISION,
    needs: server('tools'),
    inputRequired: true,
    nameFrom: 'name',
    idempotent: false,
  }),
  [McpMethod.PromptsList]: request({
    from: CLIENT,
    on: EVERY_REVISION,
    needs: server('prompts'),
    cacheable: true,
    idempotent: true,
  }),
  [McpMethod.PromptsGet]: request({
    from: CLIENT,
    on: EVERY_REVISION,
    needs: server('prompts'),
    inputRequired: true,
    nameFrom: 'name',
    idempotent: true,
  }),
  [McpMethod.ResourcesList]: request({
    from: CLIENT,
    on: EVERY_REVISION,
    needs: server('resources'),
    cacheable: true,
    idempotent: true,
  }),
  [McpMethod.ResourcesTemplatesList]: request({
    from: CLIENT,
    on: EVERY_REVISION,
    needs: server('resources'),
    cacheable: true,
    idempotent: true,
  }),
  [McpMethod.ResourcesRead]: request({
    from: CLIENT,
    on: EVERY_REVISION,
    needs: server('resources'),
    inputRequired: true,
    cacheable: true,
    nameFrom: 'uri',
    idempotent: true,
  }),
  [McpMethod.ResourcesSubscribe]: request({
    from: CLIENT,
    on: SESSION,
    needs: server('resources', 'subscribe'),
    idempotent: true,
  }),
  [McpMethod.ResourcesUnsubscribe]: request({
    from: CLIENT,
    on: SESSION,
    needs: server('resources', 'subscribe'),
    idempotent: true,
  }),
  [McpMethod.CompletionComplete]: request({
    from: CLIENT,
    on: EVERY_REVISION,
    needs: server('completions'),
    idempotent: true,
  }),
  [McpMethod.LoggingSetLevel]: request({ from: CLIENT, on: SESSION, needs: server('logging'), idempotent: true }),
  [McpMethod.SubscriptionsListen]: request({ from: CLIENT, on: STATELESS, idempotent: false }),
  [McpMethod.TasksGet]: request({ from: BOTH_PARTIES, on: EVERY_REVISION, nameFrom: 'taskId', idempotent: true }),
  [McpMethod.TasksResult]: request({ from: BOTH_PARTIES, on: SESSION, idempotent: true }),
  [McpMethod.TasksList]: request({ from: BOTH_PARTIES, on: SESSION, idempotent: true }),
  [McpMethod.TasksCancel]: request({ from: BOTH_PARTIES, on: EVERY_REVISION, nameFrom: 'taskId', idempotent: false }),
  [McpMethod.TasksUpdate]: request({ from: CLIENT, on: STATELESS, nameFrom: 'taskId', idempotent: false }),

  [McpMethod.SamplingCreateMessage]: request({
    from: SERVER,
    on: EVERY_REVISION,
    needs: client('sampling'),
    idempotent: false,
  }),
  [McpMethod.ElicitationCreate]: request({
    from: SERVER,
    on: EVERY_REVISION,
    needs: client('elicitation'),
    idempotent: false,
  }),
  [McpMethod.RootsList]: request({ from: SERVER, on: EVERY_REVISION, needs: client('roots'), idempotent: true }),

  [McpMethod.Initialized]: notification(CLIENT, SESSION),
  [McpMethod.Cancelled]: notification(BOTH_PARTIES, EVERY_REVISION),
  [McpMethod.Progress]: notification(BOTH_PARTIES, EVERY_REVISION),
  [McpMethod.LoggingMessage]: notification(SERVER, EVERY_REVISION),
  [McpMethod.ToolsListChanged]: notification(SERVER, EVERY_REVISION),
  [McpMethod.PromptsListChanged]: notification(SERVER, EVERY_REVISION),
  [McpMethod.ResourcesListChanged]: notification(SERVER, EVERY_REVISION),
  [McpMethod.ResourcesUpdated]: notification(SERVER, EVERY_REVISION),
  [McpMethod.RootsListChanged]: notification(CLIENT, EVERY_REVISION),
  // The stateless revision dropped it: the client learns the outcome by retrying its request.
  [McpMethod.ElicitationComplete]: notification(SERVER, SESSION),
  [McpMethod.TasksStatus]: notification(BOTH_PARTIES, SESSION),
  [McpMethod.Tasks]: notification(SERVER, STATELESS),
  [McpMethod.SubscriptionsAcknowledged]: notification(SERVER, STATELESS),
};

/** Every MCP method with its facts, in the order of `McpMethod`. */
export const MCP_METHOD_CATALOG: readonly McpMethodFacts[] = Object.freeze(
  (Object.values(McpMethod) as McpMethodName[]).map((method) => Object.freeze({ method, ...TABLE[method] })),
);

const BY_NAME: ReadonlyMap<string, McpMethodFacts> = new Map(MCP_METHOD_CATALOG.map((facts) => [facts.method, facts]));

/** The facts of `method`, or undefined for a method MCP does not define (a custom one). */
export function methodFacts(method: string): McpMethodFacts | undefined {
  return BY_NAME.get(method);
}

function revisionFamilyOf(protocolVersion: unknown): McpRevisionFamily | null {
  if (isSupportedSessionVersion(protocolVersion)) return 'session';
  return isStatelessVersion(protocolVersion) ? 'stateless' : null;
}

/**
 * True when `method` is an MCP method of the revision `protocolVersion`; false for a method MCP
 * does not define and for a revision this package does not speak.
 */
export function existsInRevision(method: string, protocolVersion: unknown): boolean {
  const family = revisionFamilyOf(protocolVersion);
  return family !== null && !!methodFacts(method)?.revisions.includes(family);
}

/**
 * The requests a server makes of the client that need a client capability, each with that
 * capability (`sampling/createMessage` -> `sampling`...): the kinds of client handlers.
 */
export const CLIENT_CAPABILITY_OF_REQUEST: ReadonlyMap<string, string> = new Map(
  MCP_METHOD_CATALOG.flatMap(({ method, kind, capability }) =>
    kind === 'request' && capability?.holder === 'client' ? [[method, capability.name] as const] : [],
  ),
);
