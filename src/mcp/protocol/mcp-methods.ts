/**
 * The name of every MCP method (requests and notifications, both directions, both revision
 * families), so code never spells a method as a string literal. `MCP_METHOD_CATALOG` holds one
 * entry per name and the compiler checks that neither side has one the other lacks.
 */
export const McpMethod = {
  // Client -> server requests.
  Initialize: 'initialize',
  Ping: 'ping',
  ServerDiscover: 'server/discover',
  ToolsList: 'tools/list',
  ToolsCall: 'tools/call',
  PromptsList: 'prompts/list',
  PromptsGet: 'prompts/get',
  ResourcesList: 'resources/list',
  ResourcesTemplatesList: 'resources/templates/list',
  ResourcesRead: 'resources/read',
  ResourcesSubscribe: 'resources/subscribe',
  ResourcesUnsubscribe: 'resources/unsubscribe',
  CompletionComplete: 'completion/complete',
  LoggingSetLevel: 'logging/setLevel',
  SubscriptionsListen: 'subscriptions/listen',
  TasksGet: 'tasks/get',
  TasksResult: 'tasks/result',
  TasksList: 'tasks/list',
  TasksCancel: 'tasks/cancel',
  TasksUpdate: 'tasks/update',
  // Server -> client requests.
  SamplingCreateMessage: 'sampling/createMessage',
  ElicitationCreate: 'elicitation/create',
  RootsList: 'roots/list',
  // Notifications.
  Initialized: 'notifications/initialized',
  Cancelled: 'notifications/cancelled',
  Progress: 'notifications/progress',
  LoggingMessage: 'notifications/message',
  ToolsListChanged: 'notifications/tools/list_changed',
  PromptsListChanged: 'notifications/prompts/list_changed',
  ResourcesListChanged: 'notifications/resources/list_changed',
  ResourcesUpdated: 'notifications/resources/updated',
  RootsListChanged: 'notifications/roots/list_changed',
  ElicitationComplete: 'notifications/elicitation/complete',
  TasksStatus: 'notifications/tasks/status',
  Tasks: 'notifications/tasks',
  SubscriptionsAcknowledged: 'notifications/subscriptions/acknowledged',
} as const;

/** The name of one MCP method. */
export type McpMethodName = (typeof McpMethod)[keyof typeof McpMethod];

/** HTTP header names of the Streamable HTTP transport. */
export const McpHeader = {
  SessionId: 'mcp-session-id',
  ProtocolVersion: 'mcp-protocol-version',
} as const;

/** A tool name as the specification allows: 1 to 128 characters of A-Z a-z 0-9 _ . - */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
