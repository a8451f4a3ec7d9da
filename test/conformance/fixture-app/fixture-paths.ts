/**
 * Paths of the fixture app's mounts, shared with the runner (which must not load the app). The
 * tasks-extension tools live on a mount of their own, so that the core suites see a server
 * without task tools, as before.
 */
export const FIXTURE_MCP_PATH = '/mcp';
/** The mount of the `io.modelcontextprotocol/tasks` scenarios (`tasks.tools.ts`). */
export const FIXTURE_TASKS_PATH = '/tasks/mcp';
