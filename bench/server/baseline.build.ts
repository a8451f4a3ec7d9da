import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

/** Written last into a baseline's directory: its presence means the build finished and can be reused. */
const BUILD_MARKER = '.bench-build-complete';

/** How many bytes of a failing build step's output go into its error. */
const OUTPUT_TAIL_BYTES = 4096;

/** An earlier commit of this repository, checked out and built on its own dependencies. */
export interface BaselineBuild {
  /** The ref as given (`BENCH_BASELINE`). */
  ref: string;
  /** The full commit hash it resolved to. */
  hash: string;
  /** The short hash, as printed in labels. */
  short: string;
  /** The commit's subject line. */
  subject: string;
  /** The directory the commit was built in: its `dist/main.js` is the example app of that commit. */
  dir: string;
}

function git(repoRoot: string, args: string[]): string {
  return execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** Resolves `ref` to a commit of the repository at `repoRoot`; throws a readable error when it names none. */
export function resolveBaseline(repoRoot: string, ref: string): Omit<BaselineBuild, 'dir'> {
  let hash: string;
  try {
    hash = git(repoRoot, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch {
    throw new Error(`BENCH_BASELINE="${ref}" names no commit of this repository (try a hash, a tag, main or HEAD~5)`);
  }
  return {
    ref,
    hash,
    short: git(repoRoot, ['rev-parse', '--short', hash]),
    subject: git(repoRoot, ['log', '-1', '--format=%s', hash]),
  };
}

/** The commit as the output names it: its short hash and subject, with the ref when that was something else. */
export function describeBaseline(build: Omit<BaselineBuild, 'dir'>): string {
  const named = build.hash.startsWith(build.ref.toLowerCase()) ? '' : `${build.ref} = `;
  return `${named}${build.short} "${build.subject}"`;
}

/**
 * Runs the build's commands one at a time, each in its own process group so that {@link stop}
 * reaches the whole tree (npm's install scripts, node-gyp's compilers), not just npm.
 */
class BuildSteps {
  private running: { pid: number; done: Promise<unknown> } | undefined;
  private stopped = false;

  /** Runs one command in `cwd`; rejects with the tail of its output when it fails or is stopped. */
  run(command: string, args: string[], cwd: string): Promise<void> {
    if (this.stopped) return Promise.reject(new Error('the build was stopped'));
    const child = spawn(command, args, { cwd, env: process.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_BYTES);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const done = new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, signal) =>
        code === 0
          ? resolve()
          : reject(
              new Error(`${[command, ...args].join(' ')} failed (${signal ?? `exit code ${code}`}):\n${output.trim()}`),
            ),
      );
    });
    if (child.pid) this.running = { pid: child.pid, done: done.catch(() => undefined) };
    return done;
  }

  /** Stops the running command's process group, and any later one; resolves once it has exited. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (!this.running) return;
    try {
      process.kill(-this.running.pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
    await this.running.done;
  }
}

function sameBytes(a: string, b: string): boolean {
  return existsSync(a) && existsSync(b) && readFileSync(a).equals(readFileSync(b));
}

/**
 * Checks out commit `hash` into `<cacheDir>/baseline-<hash>` (`git archive`, so no worktree is
 * registered), installs its own dependencies and runs `nest build` there. Built in a
 * `.partial-<pid>` directory renamed into place at the end, so the final directory only ever holds
 * a finished build (marked by {@link BUILD_MARKER}); a failed or interrupted build is removed. A
 * finished build is reused. When the commit's package-lock.json is byte-identical to the working
 * tree's, `node_modules` is a symlink to the working tree's instead of a fresh `npm ci`.
 * `onPartial` receives the partial directory and a function that stops the running build step, so
 * that an interrupted run can stop it and remove the directory.
 */
export async function prepareBaseline(
  repoRoot: string,
  ref: string,
  cacheDir: string,
  progress: (text: string) => void,
  onPartial: (dir: string, stop: () => Promise<void>) => void,
): Promise<BaselineBuild> {
  const commit = resolveBaseline(repoRoot, ref);
  const name = `baseline(${commit.short})`;
  const dir = join(cacheDir, `baseline-${commit.hash}`);
  if (existsSync(join(dir, BUILD_MARKER))) {
    progress(`${name}: ${describeBaseline(commit)}; reusing its build in ${dir}`);
    return { ...commit, dir };
  }
  // Left by a run of an older layout or removed by hand halfway: never reused without its marker.
  rmSync(dir, { recursive: true, force: true });
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const steps = new BuildSteps();
  onPartial(partial, () => steps.stop());
  const started = Date.now();
  progress(`${name}: ${describeBaseline(commit)}; building it in ${dir}`);
  try {
    const archive = execFileSync('git', ['archive', '--format=tar', commit.hash], {
      cwd: repoRoot,
      maxBuffer: 1 << 30,
    });
    execFileSync('tar', ['-x', '-C', partial], { input: archive });
    const ownModules = join(repoRoot, 'node_modules');
    if (sameBytes(join(repoRoot, 'package-lock.json'), join(partial, 'package-lock.json')) && existsSync(ownModules)) {
      symlinkSync(realpathSync(ownModules), join(partial, 'node_modules'), 'dir');
      progress(
        `${name}: package-lock.json is byte-identical to the working tree's: node_modules is a symlink to its node_modules (no npm ci)`,
      );
    } else {
      progress(`${name}: package-lock.json differs from the working tree's: npm ci (its own dependencies)...`);
      const installStarted = Date.now();
      await steps.run('npm', ['ci', '--no-audit', '--no-fund', '--include=dev'], partial);
      progress(`${name}: npm ci done in ${((Date.now() - installStarted) / 1000).toFixed(0)} s`);
    }
    progress(`${name}: nest build...`);
    await steps.run('npx', ['--no-install', 'nest', 'build'], partial);
    if (!existsSync(join(partial, 'dist', 'main.js'))) {
      throw new Error(`nest build of ${commit.short} produced no dist/main.js`);
    }
    writeFileSync(join(partial, BUILD_MARKER), `${commit.hash}\n`);
    try {
      renameSync(partial, dir);
    } catch (error) {
      // Another run finished the same build first: use that one.
      if (!existsSync(join(dir, BUILD_MARKER))) throw error;
      rmSync(partial, { recursive: true, force: true });
    }
  } catch (error) {
    await steps.stop();
    rmSync(partial, { recursive: true, force: true });
    throw new Error(`${name} could not be built: ${(error as Error).message}`, { cause: error });
  }
  progress(`${name}: built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { ...commit, dir };
}
