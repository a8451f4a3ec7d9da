#!/usr/bin/env node
// Type-checks every ```ts / ```typescript block of README.md, CONTRIBUTING.md, ARCHITECTURE.md and
// docs/**/*.md (not the generated API pages) against the package's public API, in one TypeScript
// program. `npm run docs:snippets`.
//
// Each block is written to temp/snippets/ as a module of its own. `durable-mcp` and its subpaths
// (`durable-mcp/testing`, `/stores`, `/protocol`, `/health`, `/console`, `/transports`, `/errors`,
// `/tool-formats`) resolve to
// the nine entry points (src/mcp/index.ts, src/mcp/<subpath>/index.ts) and nothing else: a deep
// import into the package does not resolve. Markers, on the block's first line (or the fence line):
//
//   // snippet: prelude <name>[, <name>...]   put docs/.snippets/<name>.ts around the block: what
//                                            is above its `// @snippet-body` line goes before the
//                                            block, what is below after it (no such line: all before);
//                                            `// @snippet-include <name>` in a prelude includes another
//   // snippet: fragment (<reason>)           do not check this block; the reason is required
//   ```ts snippet:skip <reason>               the same, on the fence line
//
// Prints, per markdown file, the blocks checked, skipped (with their reasons) and failed (with
// the compiler's message at file:line of the markdown), and exits 1 on any failure or on a marker
// without a reason.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

/** The package's entry points and their sources; nothing else resolves in a snippet. */
const ENTRY_POINTS = {
  'durable-mcp': ['src/mcp/index.ts'],
  ...Object.fromEntries(
    ['testing', 'stores', 'protocol', 'health', 'console', 'transports', 'errors', 'tool-formats'].map((sub) => [
      `durable-mcp/${sub}`,
      [`src/mcp/${sub}/index.ts`],
    ]),
  ),
};

const root = path.resolve(__dirname, '..');
const outDir = path.join(root, 'temp', 'snippets');
const preludeDir = path.join(root, 'docs', '.snippets');
const SKIP_DIRS = new Set(['node_modules', '.vitepress', '.snippets', 'api']);

function markdownFiles() {
  const files = ['README.md', 'CONTRIBUTING.md', 'ARCHITECTURE.md'].filter((f) => fs.existsSync(path.join(root, f)));
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        // docs/reference/api is generated: its blocks are declarations, not examples.
        if (SKIP_DIRS.has(entry.name) && !(entry.name === 'api' && dir !== path.join('docs', 'reference'))) continue;
        walk(rel);
      } else if (entry.name.endsWith('.md')) files.push(rel);
    }
  };
  walk('docs');
  return files;
}

/** The ```ts blocks of one markdown file: { line (1-based, of the first code line), code, info }. */
function blocks(file) {
  const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, lang, info] = open;
    let j = i + 1;
    while (j < lines.length && !(lines[j].startsWith(indent + fence) && lines[j].trim() === fence)) j++;
    if (lang === 'ts' || lang === 'typescript') {
      const code = lines.slice(i + 1, j).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l));
      found.push({ line: i + 2, code, info: info.trim() });
    }
    i = j;
  }
  return found;
}

const preludes = new Map();
function prelude(name) {
  if (!preludes.has(name)) {
    const file = path.join(preludeDir, `${name}.ts`);
    if (!fs.existsSync(file)) return null;
    const text = fs.readFileSync(file, 'utf8').replace(/\n+$/, '');
    // `// @snippet-include <name>` puts another prelude's head there.
    const all = text.split('\n').flatMap((l) => {
      const include = /^\/\/\s*@snippet-include\s+(\S+)\s*$/.exec(l.trim());
      return include ? (prelude(include[1])?.head ?? [`// unknown prelude ${include[1]}`]) : [l];
    });
    const at = all.findIndex((l) => l.trim() === '// @snippet-body');
    preludes.set(name, at < 0 ? { head: all, tail: [] } : { head: all.slice(0, at), tail: all.slice(at + 1) });
  }
  return preludes.get(name);
}

/** A marker's reason: what follows it, without punctuation; empty when none was given. */
const reasonOf = (text) => text.replace(/^[\s:—–\-(]+|[\s)]+$/g, '').trim();

const files = markdownFiles();
fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });

const report = new Map(); // md file -> { checked, skipped: [], failed: [] }
const snippets = new Map(); // ts file -> { md, line, offset }
for (const md of files) {
  const entry = { checked: 0, skipped: [], failed: [] };
  report.set(md, entry);
  for (const block of blocks(md)) {
    const where = `${md}:${block.line}`;
    const first = (block.code.find((l) => l.trim() !== '') ?? '').trim();
    const fenceSkip = /^snippet:skip\b(.*)$/.exec(block.info);
    const fragment = /^\/\/\s*snippet:\s*(fragment|skip)\b(.*)$/.exec(first);
    if (fenceSkip || fragment) {
      const reason = reasonOf(fenceSkip ? fenceSkip[1] : fragment[2]);
      if (!reason) entry.failed.push(`${where}: a skipped block needs a reason ("// snippet: fragment (why)")`);
      else entry.skipped.push(`${where}: ${reason}`);
      continue;
    }
    let head = [];
    let tail = [];
    const wanted = /^\/\/\s*snippet:\s*prelude\s+(.+)$/.exec(first);
    if (wanted) {
      for (const name of wanted[1]
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean)) {
        const p = prelude(name);
        if (!p) {
          entry.failed.push(`${where}: unknown prelude "${name}" (no docs/.snippets/${name}.ts)`);
          continue;
        }
        head = head.concat(p.head);
        tail = p.tail.concat(tail);
      }
    } else if (/^\/\/\s*snippet:/.test(first)) {
      entry.failed.push(`${where}: unknown marker "${first}"`);
      continue;
    }
    // The public API only: no relative import (it would reach into the repository) and no path
    // into the package besides its entry points.
    block.code.forEach((l, i) => {
      for (const m of l.matchAll(/\b(?:from|import|require)\s*\(?\s*['"]([^'"]+)['"]/g)) {
        const spec = m[1];
        if (spec.startsWith('.') || (spec.startsWith('durable-mcp/') && !(spec in ENTRY_POINTS)))
          entry.failed.push(
            `${md}:${block.line + i}: "${spec}" is not one of the package's entry points (${Object.keys(ENTRY_POINTS).join(', ')})`,
          );
      }
    });
    const name = `${md.replace(/[^A-Za-z0-9]+/g, '_')}_L${block.line}.ts`;
    const file = path.join(outDir, name);
    fs.writeFileSync(file, [...head, ...block.code, ...tail, '', 'export {};', ''].join('\n'));
    snippets.set(path.normalize(file), { md, line: block.line, offset: head.length, count: block.code.length });
  }
}

const options = {
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2023.d.ts'],
  module: ts.ModuleKind.Preserve,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  baseUrl: root,
  paths: ENTRY_POINTS,
  types: ['node'],
  strict: true,
  strictPropertyInitialization: false,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  skipLibCheck: true,
  noEmit: true,
  resolveJsonModule: true,
};

const started = Date.now();
const program = ts.createProgram([...snippets.keys()], options);
for (const sf of program.getSourceFiles()) {
  const snippet = snippets.get(path.normalize(sf.fileName));
  if (!snippet) continue;
  const entry = report.get(snippet.md);
  const diagnostics = [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)];
  if (diagnostics.length === 0) {
    entry.checked++;
    continue;
  }
  for (const d of diagnostics) {
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n    ');
    let at = `${snippet.md}:${snippet.line}`;
    if (d.start !== undefined) {
      const { line } = sf.getLineAndCharacterOfPosition(d.start);
      const inBlock = line - snippet.offset;
      at = inBlock >= 0 && inBlock < snippet.count ? `${snippet.md}:${snippet.line + inBlock}` : `${at} (prelude)`;
    }
    entry.failed.push(`${at}: TS${d.code}: ${text}`);
  }
}

let checked = 0;
let skipped = 0;
let failed = 0;
for (const [md, entry] of report) {
  const total = entry.checked + entry.skipped.length + entry.failed.length;
  if (total === 0) continue;
  checked += entry.checked;
  skipped += entry.skipped.length;
  failed += entry.failed.length;
  console.log(`${md}: ${entry.checked} checked, ${entry.skipped.length} skipped, ${entry.failed.length} failed`);
  for (const s of entry.skipped) console.log(`  skipped ${s}`);
  for (const f of entry.failed) console.log(`  FAILED ${f}`);
}
console.log(
  `\n${checked} blocks compile, ${skipped} skipped, ${failed} errors (${((Date.now() - started) / 1000).toFixed(1)} s to type-check)`,
);
process.exitCode = failed > 0 ? 1 : 0;
