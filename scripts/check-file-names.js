#!/usr/bin/env node
// Lists the TypeScript files under src/ whose names break the file-naming rule of ARCHITECTURE.md:
// `role-name.kind.ts` with a kind from the documented list, or a plain kebab-case `role-name.ts`.
// Unit specs are the same name plus `.spec` (optionally with a topic: `toolset.tasks.spec.ts`);
// TypeORM migrations keep TypeORM's `<timestamp>-PascalName.ts`.
// Exits 1 when some file breaks the rule, so it can gate `npm test` once every file conforms.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const KINDS = [
  'module',
  'service',
  'store',
  'transport',
  'endpoint',
  'feature',
  'explorer',
  'decorator',
  'interface',
  'errors',
  'constants',
  'options',
  'entity',
  'guard',
  'filter',
  'controller',
  'strategy',
  'accessor',
  'module-definition',
  'providers',
  'messages',
  'factory',
  'queue',
  'indicator',
  'tools',
  'authorizer',
  'auth',
  'parser',
  'provider',
  'config',
];

const kebab = '[a-z0-9]+(?:-[a-z0-9]+)*';
const CODE = new RegExp(`^${kebab}(?:\\.(?:${KINDS.join('|')}))?\\.ts$`);
const SPEC = new RegExp(`^${kebab}(?:\\.(?:${KINDS.join('|')}))?(?:\\.${kebab})?\\.spec\\.ts$`);
const MIGRATION = /^\d{13}-[A-Z][A-Za-z0-9]*\.ts$/;

function conforms(file) {
  const name = path.basename(file);
  if (name === 'index.ts') return true;
  if (file.split(path.sep).includes('migrations')) return MIGRATION.test(name);
  return name.endsWith('.spec.ts') ? SPEC.test(name) : CODE.test(name);
}

function walk(dir, out) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out;
}

const roots = process.argv.length > 2 ? process.argv.slice(2) : ['src'];
const files = roots.flatMap((root) => walk(root, [])).sort();
const failing = files.filter((file) => !conforms(file));
for (const file of failing) console.log(file);
console.error(`${failing.length} of ${files.length} files do not match role-name.kind.ts (see ARCHITECTURE.md, Files)`);
process.exitCode = failing.length > 0 ? 1 : 0;
