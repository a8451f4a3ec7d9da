import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig, type DefaultTheme } from 'vitepress';

const apiDir = join(__dirname, '..', 'reference', 'api');

/** The generated API reference: one sidebar entry per entry point (the pages exist only after `npm run docs:api`). */
function apiSidebar(): DefaultTheme.SidebarItem[] {
  const entries: Array<[string, string]> = [
    ['durable-mcp', 'durable-mcp'],
    ['durable-mcp/errors', 'errors'],
    ['durable-mcp/stores', 'stores'],
    ['durable-mcp/testing', 'testing'],
    ['durable-mcp/protocol', 'protocol'],
    ['durable-mcp/health', 'health'],
    ['durable-mcp/console', 'console'],
    ['durable-mcp/transports', 'transports'],
    ['durable-mcp/tool-formats', 'tool-formats'],
  ];
  return entries
    .filter(([, dir]) => existsSync(join(apiDir, dir)))
    .map(([text, dir]) => ({ text, link: `/reference/api/${dir}/` }));
}

export default defineConfig({
  title: 'durable-mcp',
  description:
    'A NestJS module for the Model Context Protocol: @McpTool toolsets over Streamable HTTP with database-backed sessions and an audit trail, and a durable queue-backed MCP client.',
  lang: 'en-GB',
  cleanUrls: true,
  lastUpdated: false,
  // Every internal link must resolve: the build fails on a dead one.
  ignoreDeadLinks: false,
  markdown: {
    lineNumbers: false,
    // The markers of `npm run docs:snippets` (scripts/check-snippets.js) are for the checker, not
    // the reader: drop a first line `// snippet: ...` and a fence's `snippet:skip ...`.
    config(md) {
      const fence = md.renderer.rules.fence!;
      md.renderer.rules.fence = (tokens, idx, options, env, self) => {
        const token = tokens[idx];
        token.info = token.info.replace(/\s*snippet:skip\b.*$/, '');
        token.content = token.content.replace(/^\/\/\s*snippet:.*\n/, '');
        return fence(tokens, idx, options, env, self);
      };
    },
  },
  // The local search index of ~400 pages is one chunk of its own, larger than Vite's 500 kB hint.
  vite: { build: { chunkSizeWarningLimit: 4096 } },
  themeConfig: {
    search: { provider: 'local' },
    outline: { level: [2, 3] },
    nav: [
      { text: 'Guide', link: '/guide/getting-started' },
      { text: 'Client', link: '/client/' },
      { text: 'Production', link: '/production/' },
      { text: 'Reference', link: '/reference/' },
      { text: 'Recipes', link: '/recipes/' },
    ],
    sidebar: [
      {
        text: 'Introduction',
        items: [
          { text: 'What it is', link: '/' },
          { text: 'Getting started', link: '/guide/getting-started' },
        ],
      },
      {
        text: 'Serving tools',
        items: [
          { text: 'Tools', link: '/server/tools' },
          { text: 'Zod and Standard Schema', link: '/server/schemas' },
          { text: 'Resources, prompts and completion', link: '/server/resources-prompts' },
          { text: 'The handler context', link: '/server/handler-context' },
          { text: 'Runtime registration', link: '/server/runtime-registration' },
          { text: 'Gateway', link: '/server/gateway' },
          { text: 'URL elicitation', link: '/server/url-elicitation' },
          { text: 'Tasks', link: '/server/tasks' },
          { text: 'Rate limits', link: '/server/rate-limits' },
          { text: 'The HTTP endpoint', link: '/server/http-endpoint' },
          { text: 'Serving over stdio', link: '/server/stdio' },
        ],
      },
      {
        text: 'Calling other servers',
        items: [
          { text: 'The client', link: '/client/' },
          { text: 'Transports', link: '/client/transports' },
          { text: 'Handlers, delivery, errors', link: '/client/delivery' },
          { text: 'Progress, logs, abort', link: '/client/progress-abort' },
          { text: 'Calling a tool as a task', link: '/client/tasks' },
          { text: 'Client options', link: '/reference/options/mcp-client-module' },
        ],
      },
      {
        text: 'Authorization',
        items: [
          { text: 'Bearer authentication', link: '/auth/bearer' },
          { text: 'OAuth resource server', link: '/auth/oauth' },
          { text: 'Guards on handlers', link: '/auth/guards' },
          { text: 'Anonymous and public', link: '/auth/anonymous' },
          { text: 'Outbound OAuth', link: '/auth/outbound-oauth' },
          { text: 'User-delegated OAuth', link: '/auth/user-oauth' },
          { text: 'Authorization server', link: '/auth/authorization-server' },
        ],
      },
      {
        text: 'Operations',
        items: [
          { text: 'Health', link: '/operations/health' },
          { text: 'Shutdown', link: '/operations/shutdown' },
          { text: 'Observability', link: '/operations/observability' },
          { text: 'Retention', link: '/operations/retention' },
          { text: 'Console', link: '/operations/console' },
        ],
      },
      {
        text: 'Production',
        items: [
          { text: 'Replicas and the session cache', link: '/production/' },
          { text: 'Scaling: the replicas curve', link: '/production/scaling' },
          { text: 'Persistence, stores, migrations', link: '/production/persistence' },
          { text: 'Redis: Sentinel and Cluster', link: '/production/redis' },
          { text: 'PostgreSQL failover', link: '/production/postgres-failover' },
          { text: 'Failure behaviour', link: '/production/failure-behaviour' },
          { text: 'Bounded state', link: '/production/bounded-state' },
          { text: 'Hostile input', link: '/production/hostile-input' },
          { text: 'Documented growth', link: '/production/growth' },
        ],
      },
      {
        text: 'Security',
        items: [{ text: 'Threat model', link: '/security/threat-model' }],
      },
      {
        text: 'Reference',
        items: [
          { text: 'Overview', link: '/reference/' },
          {
            text: 'Options',
            items: [
              { text: 'McpModule', link: '/reference/options/mcp-module' },
              { text: 'McpClientModule', link: '/reference/options/mcp-client-module' },
              { text: 'McpConsoleModule', link: '/reference/options/mcp-console-module' },
              { text: 'McpHealthModule', link: '/reference/options/mcp-health-module' },
              { text: 'McpGatewayModule', link: '/reference/options/mcp-gateway-module' },
              { text: 'McpAuthorizationServerModule', link: '/reference/options/mcp-authorization-server-module' },
            ],
          },
          { text: 'MCP features by revision', link: '/reference/features' },
          { text: 'Errors', link: '/reference/errors' },
          { text: 'API', link: '/reference/api/', items: apiSidebar() },
        ],
      },
      {
        text: 'Recipes',
        collapsed: true,
        items: [
          { text: 'All recipes', link: '/recipes/' },
          { text: 'Keycloak', link: '/recipes/keycloak' },
          { text: 'MCP Inspector', link: '/recipes/mcp-inspector' },
          { text: 'Throttling per principal', link: '/recipes/throttling' },
          { text: 'A transport of your own', link: '/recipes/custom-transport' },
          { text: 'Testing on in-memory stores', link: '/recipes/testing' },
          { text: 'A console view per tenant', link: '/recipes/tenant-console' },
          { text: 'Readiness of a task front end', link: '/recipes/task-readiness' },
        ],
      },
      {
        text: 'Contributing',
        collapsed: true,
        items: [
          { text: 'Contributing', link: '/contributing' },
          { text: 'Architecture', link: '/architecture' },
        ],
      },
    ],
  },
});
