#!/usr/bin/env node
// Generates the API reference of the nine entry points into docs/reference/api/ (git-ignored,
// never edited by hand): TypeDoc with typedoc-plugin-markdown (typedoc.json), then a pass that
// makes the pages VitePress pages. `npm run docs:api`; `npm run docs:build` runs it first.
//
// The pass:
// - names the main entry point's module `durable-mcp` (TypeDoc calls it after its file, `index`)
//   and the others after their subpath (`durable-mcp/stores`, `durable-mcp/health`, ...);
// - wraps every page's body in a `v-pre` container, so that VitePress (which compiles markdown as
//   Vue templates) shows `{{ ... }}` in doc comments as text;
// - escapes a `<` that would open an HTML tag outside code, for the same reason.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const out = path.join(root, 'docs', 'reference', 'api');

// `--if-missing` (docs:dev): keep a reference already generated.
if (process.argv.includes('--if-missing') && fs.existsSync(path.join(out, 'durable-mcp', 'index.md'))) {
  console.log(`API reference: kept (${path.relative(root, out)}; npm run docs:api regenerates it)`);
  process.exit(0);
}

execFileSync(
  process.execPath,
  [path.join(root, 'node_modules', 'typedoc', 'bin', 'typedoc'), '--options', path.join(root, 'typedoc.json')],
  {
    cwd: root,
    stdio: 'inherit',
  },
);

// The main entry point: TypeDoc's module `index` becomes `durable-mcp`.
fs.renameSync(path.join(out, 'index'), path.join(out, 'durable-mcp'));

const LABELS = {
  index: 'durable-mcp',
  testing: 'durable-mcp/testing',
  stores: 'durable-mcp/stores',
  protocol: 'durable-mcp/protocol',
  health: 'durable-mcp/health',
  console: 'durable-mcp/console',
  transports: 'durable-mcp/transports',
  errors: 'durable-mcp/errors',
  'tool-formats': 'durable-mcp/tool-formats',
};

function files(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : e.name.endsWith('.md') ? [p] : [];
  });
}

/**
 * Escapes what Vue would read as markup in a line outside code spans: `<` before a letter or `/`,
 * but for the named anchors TypeDoc adds to table rows (`<a id="..."></a>`).
 */
function escapeLine(line) {
  // Split on code spans (`...`, ``...``) and leave them alone: VitePress escapes their content.
  return line
    .split(/(`+[^`]*`+)/)
    .map((part, i) =>
      i % 2 === 1 ? part : part.replace(/(^|[^\\])<(?=[A-Za-z/!])(?!a id="[^"<>]*"><\/a>)(?!\/a>)/g, '$1&lt;'),
    )
    .join('');
}

let pages = 0;
for (const file of files(out)) {
  const rel = path.relative(out, file).split(path.sep);
  let text = fs.readFileSync(file, 'utf8');

  // Links into the renamed module: ../index/..., index/index.md (from the root page).
  text = text.replace(/\]\(((?:\.\.\/)*)index\//g, (m, up) => {
    // From inside a module folder, `../index/` climbs to the api root only when `up` reaches it.
    const depth = rel.length - 1; // folders below api/
    return up.length / 3 === depth ? `](${up}durable-mcp/` : m;
  });
  // Module names in breadcrumbs, lists and titles.
  for (const [module, label] of Object.entries(LABELS)) {
    text = text
      .replace(new RegExp(`\\[${module}\\]\\(`, 'g'), `[${label}](`)
      .replace(new RegExp(`^# ${module}$`, 'm'), `# ${label}`);
  }

  if (rel.length === 1 && rel[0] === 'index.md') {
    text = [
      '# API reference',
      '',
      'Generated from the code and its doc comments at build time; never edited by hand. One section per',
      'entry point of the package:',
      '',
      `- [\`${LABELS.index}\`](durable-mcp/index.md): the modules, decorators, services, options types, handler-context types, and the entity and migration lists`,
      `- [\`${LABELS.stores}\`](stores/index.md): the store contracts, their tokens and records, the entities one by one, for a store of your own`,
      `- [\`${LABELS.testing}\`](testing/index.md): in-memory stores for your tests`,
      `- [\`${LABELS.protocol}\`](protocol/index.md): the wire vocabulary (JSON-RPC types, method names and facts, revisions, stateless \`_meta\` keys, headers, error codes)`,
      `- [\`${LABELS.health}\`](health/index.md): health checks on \`@nestjs/terminus\` (\`McpHealthModule\`, \`McpHealthIndicator\`)`,
      `- [\`${LABELS.console}\`](console/index.md): the audit console (\`McpConsoleModule\`) and \`McpAuditQuery\`, the queries behind its pages`,
      `- [\`${LABELS.transports}\`](transports/index.md): the transport contract of a custom transport and \`mcpTransports()\`, in-process delivery to a \`Toolset\`, \`MCP_TRANSPORT_FACTORIES\``,
      `- [\`${LABELS.errors}\`](errors/index.md): every error the package throws or rejects with, for \`instanceof\` checks, and the ones a handler throws`,
      `- [\`${LABELS['tool-formats']}\`](tool-formats/index.md): the servers' tools as OpenAI, Anthropic and Gemini function declarations`,
      '',
    ].join('\n');
  }

  // Escape markup outside fenced code, then wrap the body (after the first heading) in v-pre.
  const lines = text.split('\n');
  let fence = null;
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*(`{3,}|~{3,})/.exec(lines[i]);
    if (m) {
      if (fence === null) fence = m[1];
      else if (lines[i].trim() === fence) fence = null;
      continue;
    }
    if (fence === null) lines[i] = escapeLine(lines[i]);
  }
  const title = lines.findIndex((l) => /^# /.test(l));
  const body = title < 0 ? lines : lines.slice(title + 1);
  const head = title < 0 ? [] : lines.slice(0, title + 1);
  text = [...head, '', '::: v-pre', ...body, ':::', ''].join('\n');
  fs.writeFileSync(file, text);
  pages++;
}
console.log(`API reference: ${pages} pages in ${path.relative(root, out)}`);
