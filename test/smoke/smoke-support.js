/**
 * What the smoke tests share: running a command, the PostgreSQL admin connection and throwaway
 * database URLs, a free port, packing this package into a tarball, booting a host app until it
 * says it listens, stopping it, and a list of cleanups that runs whatever happens (also on
 * SIGINT/SIGTERM).
 */
'use strict';

const { spawn } = require('node:child_process');
const { existsSync, mkdtempSync, readdirSync, rmSync } = require('node:fs');
const { createServer } = require('node:net');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');
const { Client } = require('pg');
const { DEFAULT_PG_URL } = require('../support/test-services');

/** The repository's root (where `npm pack` runs). */
const ROOT = resolve(__dirname, '..', '..');
/** A PostgreSQL user that may create databases (TEST_PG_URL, as the Jest suites use). */
const PG_ADMIN_URL = process.env.TEST_PG_URL || DEFAULT_PG_URL;
/** SMOKE_KEEP=1 keeps the temporary app directories for a look after the run. */
const KEEP = process.env.SMOKE_KEEP === '1';

/** Runs a command; resolves with its output, rejects with the output's tail when it fails. */
function run(command, args, options = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolvePromise(output);
      else
        reject(
          new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output.split('\n').slice(-40).join('\n')}`),
        );
    });
  });
}

/** Runs one SQL statement on the admin connection (PG_ADMIN_URL). */
async function admin(sql) {
  const client = new Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The URL of database `name` on the admin connection's server. */
function databaseUrl(name) {
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A TCP port nobody listens on right now (the OS picks it). */
function freePort() {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePromise(port));
    });
  });
}

/** Cleanups run last-in first-out by `runAll`; a failing one is logged and the others still run. */
function createCleanups() {
  const list = [];
  return {
    add(fn) {
      list.push(fn);
    },
    async runAll() {
      while (list.length) {
        await Promise.resolve()
          .then(list.pop())
          .catch((error) => console.error(`cleanup: ${error instanceof Error ? error.message : error}`));
      }
    },
  };
}

/** Runs `cleanups` and exits 1 on SIGINT/SIGTERM, so an interrupted run leaves nothing behind. */
function cleanUpOnSignals(cleanups) {
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      void cleanups.runAll().finally(() => process.exit(1));
    });
  }
}

/** A temporary directory, removed by `cleanups` (unless SMOKE_KEEP=1). */
function tempDir(prefix, cleanups) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (!KEEP) cleanups.add(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Packs this package (npm pack runs the prepare script, which builds dist/mcp) into a temp dir;
 * resolves with the tarball's path. With SMOKE_TARBALL set to an existing tarball, uses that one
 * instead (so that smoke tests running side by side share one pack and one build).
 */
async function packTarball(cleanups) {
  const given = process.env.SMOKE_TARBALL;
  if (given) {
    if (!existsSync(given)) throw new Error(`SMOKE_TARBALL=${given}: no such file`);
    return given;
  }
  const packDir = mkdtempSync(join(tmpdir(), 'durable-mcp-pack-'));
  cleanups.add(() => rmSync(packDir, { recursive: true, force: true }));
  await run('npm', ['pack', '--pack-destination', packDir, '--loglevel=error'], { cwd: ROOT });
  return join(
    packDir,
    readdirSync(packDir).find((f) => f.endsWith('.tgz')),
  );
}

/**
 * Starts `command args` in `dir` and waits for it to print `listening` (killed when it does not
 * within `deadlineMs`); resolves with the child process. Its output goes to `log`, line by line.
 */
function bootApp({ command, args, dir, env, log, deadlineMs }) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: dir,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let listening = false;
    // A hung boot must not outlive the error: the app is killed with it.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the app did not listen within ${deadlineMs / 1000} s and was killed:\n${output}`));
    }, deadlineMs);
    const onData = (chunk) => {
      output += chunk;
      log(String(chunk).trimEnd());
      if (!listening && output.includes('listening')) {
        listening = true;
        clearTimeout(timer);
        resolvePromise(child);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (!listening) reject(new Error(`the app exited with ${code} before listening:\n${output}`));
    });
  });
}

/** Stops a booted app: SIGTERM, then SIGKILL when it has not exited after 5 s. */
async function stopApp(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** The host apps' two tools, as TypeScript source: `echo`, and `relay`, which calls `echo` again through McpClientService. */
const TOOLS_SOURCE = `@Injectable()
export class EchoTools {
  @McpTool({
    name: 'echo',
    description: 'Echoes text back',
    input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  })
  echo(args: { text: string }): string {
    return args.text;
  }
}

/** Calls echo again through the client module: a Bull job when the host configures Bull, else an inline durable call. */
@Injectable()
export class RelayTools {
  constructor(private readonly client: McpClientService) {}

  @McpTool({
    name: 'relay',
    description: 'Echoes text through McpClientService',
    input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  })
  async relay(args: { text: string }) {
    const result = await this.client.callTool('self', 'echo', { text: args.text });
    return result.content;
  }
}
`;

module.exports = {
  ROOT,
  PG_ADMIN_URL,
  KEEP,
  run,
  admin,
  databaseUrl,
  freePort,
  createCleanups,
  cleanUpOnSignals,
  tempDir,
  packTarball,
  bootApp,
  stopApp,
  TOOLS_SOURCE,
};
