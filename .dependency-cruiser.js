/**
 * The layers of the library and what each may import (`npm run lint:deps`, part of `npm test`).
 * ARCHITECTURE.md draws the same picture.
 */
const OURS = '^src/';
const SHARED =
  '^src/mcp/(errors|interfaces|telemetry)/|^src/mcp/(mcp[.](constants|messages)|bounded-fetch|in-flight-set|token-cipher|bull-queue[.]factory|redis-outage-log)[.]ts$';

/**
 * The folders of server/, lowest first: a folder imports only folders before it (and the files at
 * the root of server/, the explorers and the providers that wire a mount, are imported by none).
 * ARCHITECTURE.md ("Inside server/") says what each holds.
 */
const SERVER_LAYERS = [
  'interfaces',
  'decorators',
  'config',
  'responses',
  'pipeline',
  'oauth',
  'pubsub',
  'ratelimit',
  'shutdown',
  'tools',
  'dispatch',
  'sessions',
  'stateless',
  'features',
  'tasks',
  'catalog',
  'http',
  'stdio',
  'registry',
  'auth',
];

/** One rule per folder of server/: nothing above it, and no root file of server/. */
const serverLayerRules = SERVER_LAYERS.map((folder, index) => ({
  name: `server-layers-${folder}`,
  comment: `server/${folder}/ imports only the folders below it in SERVER_LAYERS (${SERVER_LAYERS.slice(0, index).join(', ') || 'none'}), never a root file of server/.`,
  severity: 'error',
  from: { path: `^src/mcp/server/${folder}/` },
  to: {
    path: `^src/mcp/server/(${[...SERVER_LAYERS.slice(index + 1).map((above) => `${above}/`), '[^/]+[.]ts$'].join('|')})`,
  },
}));

module.exports = {
  forbidden: [
    ...serverLayerRules,
    {
      name: 'server-folders-are-layered',
      comment: 'Every folder of server/ has its place in SERVER_LAYERS.',
      severity: 'error',
      from: { path: '^src/mcp/server/' },
      to: {
        path: '^src/mcp/server/[^/]+/',
        pathNot: `^src/mcp/server/(${SERVER_LAYERS.join('|')})/`,
      },
    },
    {
      name: 'protocol-is-pure',
      comment: 'protocol/ is the wire vocabulary: it imports nothing of ours outside protocol/, and no framework.',
      severity: 'error',
      from: { path: '^src/mcp/protocol/' },
      to: {
        path: `${OURS}|^node_modules/(@nestjs|typeorm|bull|ioredis|pg|better-sqlite3)`,
        pathNot: '^src/mcp/protocol/',
      },
    },
    {
      name: 'server-not-client',
      comment:
        'The server never imports the client: the in-process transport reaches a toolset through McpMessageHandler.',
      severity: 'error',
      from: { path: '^src/mcp/server/' },
      to: { path: '^src/mcp/client/' },
    },
    {
      name: 'client-not-server',
      comment: 'The client never imports the server.',
      severity: 'error',
      from: { path: '^src/mcp/client/' },
      to: { path: '^src/mcp/server/' },
    },
    {
      name: 'persistence-below-server-and-client',
      comment: 'Stores serve both halves: persistence/ imports neither server/ nor client/.',
      severity: 'error',
      from: { path: '^src/mcp/persistence/' },
      to: { path: '^src/mcp/(server|client)/' },
    },
    {
      name: 'console-reads-persistence-only',
      comment:
        "The audit console reads the stores' tables: it imports persistence/, protocol/ and shared code, never the server or client halves.",
      severity: 'error',
      from: { path: '^src/mcp/console/' },
      to: { path: '^src/mcp/(server|client|testing)/' },
    },
    {
      name: 'nothing-imports-console',
      comment: 'The console is an optional module on top: no layer below the wiring imports it.',
      severity: 'error',
      from: { path: '^src/mcp/(server|client|persistence|protocol|testing|errors|interfaces)/' },
      to: { path: '^src/mcp/console/' },
    },
    {
      name: 'shared-below-everything',
      comment:
        'Errors, shared interfaces, telemetry, constants, messages, the bounded fetch, the in-flight set and the token cipher are imported by every layer and import none of them.',
      severity: 'error',
      // errors/index.ts is the `durable-mcp/errors` entry point, which gathers the errors of every layer.
      from: { path: SHARED, pathNot: '^src/mcp/errors/index[.]ts$' },
      to: { path: '^src/mcp/(server|client|persistence|testing|console)/' },
    },
    {
      name: 'errors-entry-point-not-imported',
      comment:
        'errors/index.ts is an entry point of the package: code of the library imports the file of the error it needs, never the entry point.',
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: { path: '^src/mcp/errors/index[.]ts$' },
    },
    {
      name: 'library-not-example-app',
      comment: 'The library never imports the example app that `npm start` runs.',
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: { path: '^src/', pathNot: '^src/mcp/' },
    },
    {
      name: 'no-circular',
      comment: 'Import cycles make the load order matter; break them with an interface in the lower layer.',
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: { circular: true, viaOnly: { pathNot: '[.]spec[.]ts$' } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '[.]spec[.]ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
