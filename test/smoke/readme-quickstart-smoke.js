#!/usr/bin/env node
/**
 * README quick start smoke test: builds the app of README.md's quick start exactly as a newcomer
 * copies it, in a fresh directory, on SQLite (no database server, no Redis), and calls it the way
 * the README does. It fails when the README's blocks no longer install, compile, boot or answer.
 *
 * The blocks it uses are marked in README.md by an HTML comment on the line right before the
 * fence (invisible on the rendered page):
 *
 *   <!-- quickstart: install -->                   before a ```bash fence: its `npm install` commands
 *                                                  are run in the new app, with `durable-mcp` replaced
 *                                                  by the packed tarball (SMOKE_TARBALL, or packed here)
 *   <!-- quickstart: src/app.module.ts -->         before a ```ts fence: the block becomes that file of
 *                                                  the new app (any relative path; at least src/main.ts)
 *   <!-- quickstart: call, answers "TEXT" -->      before a ```bash fence: run with bash once the app
 *                                                  listens, with MCP_TOKEN set and 127.0.0.1:3000 (or
 *                                                  localhost:3000) pointing at the app's port; one of
 *                                                  the JSON-RPC answers it prints must be a tool result
 *                                                  whose first text is TEXT
 *
 * Steps: `npm init -y`, the install block, `typescript@~5.9 @types/node@^20` (to compile), the
 * marked files, the tsconfig `nest new` writes, `tsc`, `node dist/main.js` with PORT and MCP_TOKEN,
 * the call block; then the app is stopped with SIGTERM and the SQLite file named by the blocks'
 * `database: '...'` must hold the `mcp_events` row of the tools/call. Prints one PASS/FAIL line;
 * exits non-zero on failure. Temporary directories are removed whatever happens (SMOKE_KEEP=1
 * keeps them). SMOKE_README=path tests another copy of the README (a draft).
 *
 * better-sqlite3's install script downloads a prebuilt binary, and compiles SQLite (minutes of
 * CPU) when it cannot, as on a machine that reaches the npm registry but not GitHub. The binary
 * this checkout's `npm ci` got is offered to the install as a local prebuild (prebuild-install's
 * `npm_config_better_sqlite3_local_prebuilds`), which it takes when the README installs the same
 * version for the same Node; SMOKE_SQLITE_PREBUILD=0 leaves the install script on its own.
 */
'use strict';

const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { existsSync, mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { dirname, isAbsolute, join, normalize, relative, resolve } = require('node:path');
const {
  ROOT,
  cleanUpOnSignals,
  createCleanups,
  freePort,
  packTarball,
  run,
  stopApp,
  tempDir,
} = require('./smoke-support');

const README = process.env.SMOKE_README ? resolve(process.env.SMOKE_README) : join(ROOT, 'README.md');
const README_NAME = relative(ROOT, README).startsWith('..') ? README : relative(ROOT, README);
/** The compiler the new app gets; the README assumes one (a `nest new` app has it). */
const DEV_PACKAGES = ['typescript@~5.9', '@types/node@^20'];
/** What `nest new` writes (without --strict), so the blocks compile as they would in a fresh Nest 11 app. */
const TSCONFIG = {
  compilerOptions: {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    resolvePackageJsonExports: true,
    esModuleInterop: true,
    isolatedModules: true,
    declaration: true,
    removeComments: true,
    emitDecoratorMetadata: true,
    experimentalDecorators: true,
    allowSyntheticDefaultImports: true,
    target: 'ES2023',
    sourceMap: true,
    outDir: './dist',
    baseUrl: './',
    incremental: true,
    skipLibCheck: true,
    strictNullChecks: true,
    forceConsistentCasingInFileNames: true,
    noImplicitAny: false,
    strictBindCallApply: false,
    noFallthroughCasesInSwitch: false,
  },
  include: ['src'],
};
/** How long the compiled app may take to listen on a loaded machine. */
const BOOT_DEADLINE_MS = 60_000;
/** How long the call block may run (curl has no timeout of its own). */
const CALL_DEADLINE_MS = 30_000;

const cleanups = createCleanups();

/** A failure that names the README block it comes from; its message is the FAIL line's reason. */
class ReadmeError extends Error {}

/** `README.md:152 (quickstart: src/main.ts)`: where a block is, for messages. */
function where(block) {
  return `${README_NAME}:${block.line} (quickstart: ${block.marker})`;
}

/**
 * The marked blocks of the README: `install`, `call` and `files` (each with its marker, the line of
 * its first code line and its body). Throws on a marker that is not right before a fence, an
 * unknown marker, a missing or repeated block.
 */
function parseReadme(text) {
  const lines = text.split('\n');
  const blocks = { install: null, call: null, files: [] };
  for (let i = 0; i < lines.length; i++) {
    const marker = /^<!--\s*quickstart:\s*(.+?)\s*-->\s*$/.exec(lines[i]);
    if (!marker) continue;
    const fence = /^(`{3,})\s*(\w*)\s*$/.exec(lines[i + 1] || '');
    if (!fence)
      throw new ReadmeError(
        `${README_NAME}:${i + 1}: the marker <!-- quickstart: ${marker[1]} --> is not right before a code fence`,
      );
    const close = lines.findIndex((line, n) => n > i + 1 && line.trimEnd() === fence[1]);
    if (close < 0)
      throw new ReadmeError(
        `${README_NAME}:${i + 2}: the code fence after <!-- quickstart: ${marker[1]} --> is never closed`,
      );
    const block = { marker: marker[1], lang: fence[2], line: i + 3, body: lines.slice(i + 2, close).join('\n') + '\n' };
    const expectLang = (langs) => {
      if (!langs.includes(block.lang))
        throw new ReadmeError(`${where(block)}: a \`\`\`${langs[0]} block was expected, found \`\`\`${block.lang}`);
    };
    const call = /^call,\s*answers\s+"(.+)"$/.exec(block.marker);
    if (block.marker === 'install') {
      expectLang(['bash', 'sh', 'shell']);
      if (blocks.install)
        throw new ReadmeError(`${where(block)}: a second install block (the first is at line ${blocks.install.line})`);
      blocks.install = block;
    } else if (call) {
      expectLang(['bash', 'sh', 'shell']);
      if (blocks.call)
        throw new ReadmeError(`${where(block)}: a second call block (the first is at line ${blocks.call.line})`);
      blocks.call = { ...block, answers: call[1] };
    } else if (/^call\b/.test(block.marker)) {
      throw new ReadmeError(
        `${where(block)}: a call marker says what the tool answers: <!-- quickstart: call, answers "TEXT" -->`,
      );
    } else if (/\.tsx?$/.test(block.marker)) {
      expectLang(['ts', 'typescript']);
      const path = normalize(block.marker);
      if (isAbsolute(path) || path.startsWith('..'))
        throw new ReadmeError(`${where(block)}: the file must be a relative path inside the app`);
      if (blocks.files.some((f) => f.path === path)) throw new ReadmeError(`${where(block)}: ${path} is marked twice`);
      blocks.files.push({ ...block, path });
    } else {
      throw new ReadmeError(`${where(block)}: unknown marker (install, call, answers "TEXT", or a .ts file path)`);
    }
    i = close;
  }
  if (!blocks.install) throw new ReadmeError(`${README_NAME}: no <!-- quickstart: install --> block`);
  if (!blocks.call) throw new ReadmeError(`${README_NAME}: no <!-- quickstart: call, answers "TEXT" --> block`);
  if (!blocks.files.some((f) => f.path === join('src', 'main.ts')))
    throw new ReadmeError(`${README_NAME}: no <!-- quickstart: src/main.ts --> block`);
  return blocks;
}

/**
 * The install block's `npm install` commands as argument lists, `durable-mcp` replaced by the
 * tarball. Comments and blank lines are skipped, `\` continues a line; anything else than
 * `npm install`/`npm i` (or shell syntax the test does not run) fails, so the README cannot say
 * more than what is tested.
 */
function installCommands(block, tarball) {
  const commands = [];
  let durable = 0;
  const joined = block.body.replace(/\\\n/g, ' ');
  for (const raw of joined.split('\n')) {
    const line = raw.replace(/(^|\s)#.*$/, '').trim();
    if (!line) continue;
    if (/[;&|<>$`'"()]/.test(line))
      throw new ReadmeError(`${where(block)}: the smoke test runs plain \`npm install\` lines; found: ${line}`);
    const words = line.split(/\s+/);
    if (words[0] !== 'npm' || !['install', 'i'].includes(words[1]))
      throw new ReadmeError(`${where(block)}: not an \`npm install\` line: ${line}`);
    const args = words.slice(1).map((word) => {
      if (!/^durable-mcp(@.*)?$/.test(word)) return word;
      durable++;
      return tarball;
    });
    commands.push(args);
  }
  if (durable !== 1)
    throw new ReadmeError(`${where(block)}: \`durable-mcp\` should be installed once, found ${durable} times`);
  return commands;
}

/** `src/main.ts(4,10): error ...` -> the same with `(README.md:N)` appended, N the README line of that file line. */
function toReadmeLines(output, files) {
  return output
    .split('\n')
    .map((line) => {
      const m = /^(\S+?\.tsx?)\((\d+),(\d+)\)/.exec(line);
      const file = m && files.find((f) => f.path === normalize(m[1]));
      return file ? `${line}  <- ${README_NAME}:${file.line + Number(m[2]) - 1} (quickstart: ${file.marker})` : line;
    })
    .join('\n');
}

/** Resolves once the app answers HTTP on `port` (any status: Nest listens after its init); rejects when it exits or the deadline passes. */
function waitForHttp(child, port, output) {
  return new Promise((resolvePromise, reject) => {
    const deadline = Date.now() + BOOT_DEADLINE_MS;
    let exited = false;
    child.once('exit', (code, signal) => {
      exited = true;
      reject(new Error(`it exited (${signal || code}) before listening:\n${output()}`));
    });
    const probe = async () => {
      if (exited) return;
      try {
        await (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) })).arrayBuffer();
        resolvePromise();
      } catch {
        if (Date.now() > deadline) {
          child.kill('SIGKILL');
          reject(
            new Error(
              `it did not listen on port ${port} within ${BOOT_DEADLINE_MS / 1000} s and was killed:\n${output()}`,
            ),
          );
        } else setTimeout(probe, 250);
      }
    };
    void probe();
  });
}

/** Runs `bash -c script` with a deadline; resolves with its exit code and output. */
function runBash(script, { cwd, env }) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', ['-c', script], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), CALL_DEADLINE_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({
        code: signal === 'SIGKILL' ? `killed after ${CALL_DEADLINE_MS / 1000} s` : code,
        stdout,
        stderr,
      });
    });
  });
}

/** The JSON-RPC messages in curl's output: JSON lines, and the `data:` lines of SSE answers. */
function jsonRpcMessages(text) {
  const messages = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim().replace(/^data:\s*/, '');
    if (!line.startsWith('{')) continue;
    // Several answers without a newline between them (curl adds none): split at each `}{`.
    for (const part of line.replace(/}\s*{/g, '}\n{').split('\n')) {
      try {
        messages.push(JSON.parse(part));
      } catch {
        // Not JSON (a header line, say): not an answer.
      }
    }
  }
  return messages;
}

/** The SQLite file of the blocks' `database: '...'` option, relative to the app's directory. */
function sqliteFileOf(files) {
  for (const file of files) {
    const m = /database:\s*(['"`])([^'"`]+)\1/.exec(file.body);
    if (m) return { file, path: m[2] };
  }
  throw new ReadmeError(
    `${README_NAME}: no block sets \`database: '...'\` (the SQLite file the smoke test reads the audit row from)`,
  );
}

/**
 * The environment that offers the app's install this checkout's better-sqlite3 binary as a local
 * prebuild (see the top of the file): a directory holding it packed as its release would be.
 * Empty when there is none to offer.
 */
async function sqlitePrebuildEnv(log) {
  if (process.env.SMOKE_SQLITE_PREBUILD === '0') return {};
  const pkg = join(ROOT, 'node_modules', 'better-sqlite3');
  const binary = 'build/Release/better_sqlite3.node';
  if (!existsSync(join(pkg, binary))) return {};
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  const dir = tempDir('durable-mcp-prebuilds-', cleanups);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run('tar', ['-czf', join(dir, name), '-C', pkg, binary]);
  log(`offering this checkout's better-sqlite3 ${version} binary to the install as a local prebuild`);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}

async function smoke(log) {
  const readme = readFileSync(README, 'utf8');
  const blocks = parseReadme(readme);
  const sqlite = sqliteFileOf(blocks.files);

  let started = Date.now();
  const tarball = await packTarball(cleanups);
  log(`tarball ${tarball.split('/').pop()} (${Math.round((Date.now() - started) / 1000)} s)`);
  const commands = installCommands(blocks.install, tarball);

  const dir = tempDir('durable-mcp-readme-', cleanups);
  log(`app directory ${dir}`);
  await run('npm', ['init', '-y'], { cwd: dir });
  const prebuild = await sqlitePrebuildEnv(log);
  started = Date.now();
  for (const args of commands) {
    try {
      await run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, env: prebuild });
    } catch (error) {
      throw new ReadmeError(`the install block ${where(blocks.install)} failed: ${error.message}`);
    }
  }
  await run('npm', ['install', '--save-dev', '--no-audit', '--no-fund', '--loglevel=error', ...DEV_PACKAGES], {
    cwd: dir,
  });
  const deps = JSON.parse(
    await run('npm', ['ls', '--json', 'durable-mcp', 'typeorm', '@nestjs/core', 'better-sqlite3'], { cwd: dir }),
  ).dependencies;
  const versions = ['durable-mcp', 'typeorm', '@nestjs/core', 'better-sqlite3']
    .map((name) => `${name} ${deps[name].version}`)
    .join(', ');
  log(`installed in ${Math.round((Date.now() - started) / 1000)} s: ${versions}`);

  for (const file of blocks.files) {
    mkdirSync(join(dir, dirname(file.path)), { recursive: true });
    writeFileSync(join(dir, file.path), file.body);
  }
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  started = Date.now();
  try {
    await run(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
      cwd: dir,
    });
  } catch (error) {
    const output = toReadmeLines(error.message, blocks.files);
    const first = output.split('\n').find((line) => line.includes(`<- ${README_NAME}:`));
    // The FAIL line names the README line of the first error, and the error.
    const headline = first
      ? `${first.split('<- ')[1]} does not compile: ${first
          .split('<- ')[0]
          .replace(/^\S+\(\d+,\d+\):\s*/, '')
          .trim()}`
      : `the README's TypeScript blocks (${blocks.files.map(where).join(', ')}) do not compile`;
    throw new ReadmeError(`${headline}\n${output}`);
  }
  log(`compiled with tsc in ${Math.round((Date.now() - started) / 1000)} s`);

  const port = await freePort();
  const token = randomBytes(16).toString('hex');
  const env = { PORT: String(port), MCP_TOKEN: token };
  let appOutput = '';
  const app = spawn(process.execPath, ['dist/main.js'], {
    cwd: dir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.add(() => stopApp(app));
  for (const stream of [app.stdout, app.stderr]) {
    stream.on('data', (chunk) => {
      appOutput += chunk;
      for (const line of String(chunk).trimEnd().split('\n')) log(`app: ${line}`);
    });
  }
  started = Date.now();
  try {
    await waitForHttp(app, port, () => appOutput.split('\n').slice(-40).join('\n'));
  } catch (error) {
    throw new ReadmeError(`the README's app (${blocks.files.map(where).join(', ')}) did not boot: ${error.message}`);
  }
  log(`listening on ${port} after ${Math.round((Date.now() - started) / 1000)} s`);

  const call = blocks.call;
  const local = /\b(127\.0\.0\.1|localhost):3000\b/g;
  if (!call.body.match(local))
    throw new ReadmeError(
      `${where(call)}: the call block does not call http://127.0.0.1:3000 (or localhost:3000), where the app listens`,
    );
  const script = `set -euo pipefail\n${call.body.replace(local, `$1:${port}`)}`;
  const result = await runBash(script, { cwd: dir, env: { MCP_TOKEN: token } });
  const answers = jsonRpcMessages(result.stdout);
  const texts = answers.flatMap((m) =>
    m.result && Array.isArray(m.result.content) && !m.result.isError ? [m.result.content[0]?.text] : [],
  );
  if (result.code !== 0 || !texts.includes(call.answers)) {
    throw new ReadmeError(
      `the call block ${where(call)} ${result.code !== 0 ? `exited with ${result.code}` : `did not get "${call.answers}"`}` +
        ` (tool answers: ${JSON.stringify(texts)}):\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`,
    );
  }
  log(`call block answered "${call.answers}"`);

  started = Date.now();
  await stopApp(app);
  log(`stopped with ${app.signalCode || app.exitCode} after ${Math.round((Date.now() - started) / 1000)} s`);

  const dbPath = join(dir, sqlite.path);
  if (!existsSync(dbPath)) throw new ReadmeError(`${where(sqlite.file)}: the app wrote no ${sqlite.path}`);
  // The repository's own driver: the check needs nothing from the app's install.
  const Database = require('better-sqlite3');
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  let rows;
  try {
    rows = db
      .prepare(
        `SELECT principal_key AS principal, is_error AS isError, json_extract(request, '$.params.name') AS tool FROM mcp_events WHERE direction = 'inbound' AND method = 'tools/call'`,
      )
      .all();
  } finally {
    db.close();
  }
  if (rows.length !== 1 || rows[0].isError) {
    throw new ReadmeError(
      `${sqlite.path}: expected one mcp_events row for the call block's tools/call, found ${JSON.stringify(rows)}`,
    );
  }
  return `${README_NAME} lines ${Math.min(...[blocks.install, call, ...blocks.files].map((b) => b.line))}-${call.line}: ${versions}; tsc, boot, call block answered "${call.answers}", mcp_events row for ${rows[0].tool} by ${rows[0].principal} in ${sqlite.path}`;
}

async function main() {
  const started = Date.now();
  const lines = [];
  const log = (line) => lines.push(`[readme] ${line}`);
  let ok = false;
  let detail;
  try {
    detail = await smoke(log);
    ok = true;
  } catch (error) {
    detail = error instanceof Error ? error.message : String(error);
  }
  await cleanups.runAll();
  const seconds = Math.round((Date.now() - started) / 1000);
  if (ok) {
    for (const line of lines.filter((l) => !l.startsWith('[readme] app: '))) console.log(line);
    console.log(`readme quickstart smoke: PASS in ${seconds} s (${detail})`);
  } else {
    for (const line of lines) console.log(line);
    if (detail.includes('\n')) console.log(detail);
    console.log(`readme quickstart smoke: FAIL in ${seconds} s (${detail.split('\n')[0]})`);
  }
  return ok;
}

cleanUpOnSignals(cleanups);

main().then((ok) => process.exit(ok ? 0 : 1));
