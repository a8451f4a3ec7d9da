import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import Redis from 'ioredis';
import { freeLoopbackPort } from '../support/child-process';
import { pollUntil } from '../faults/support/free-port';
import { PG_ADMIN_URL } from '../support/postgres';
import { TEST_REDIS_URL } from '../support/redis';

interface Started {
  kind: 'PostgreSQL' | 'Redis';
  url: string;
  pid: number;
  dir: string;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the JavaScript module of Jest's globalSetup, outside the TypeScript project
const services = require('../support/test-services.js') as {
  setUpServices(options: { env: NodeJS.ProcessEnv; log?: (line: string) => void; workers?: number }): Promise<void>;
  redisUrlForWorker(env: NodeJS.ProcessEnv): string;
  tearDownServices(): Promise<void>;
  startedServices(): Started[];
  probePostgres(url: string): Promise<string | undefined>;
  probeRedis(url: string): Promise<string | undefined>;
};

const MODULE = join(__dirname, '..', 'support', 'test-services.js');
/** A first fallback on a fresh machine installs the PostgreSQL binaries (about a minute at most). */
const START_MS = 120_000;

/** Whether `pid` is gone (or only a zombie waiting for its parent to reap it). */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? false;
  } catch {
    return true;
  }
}

/** Waits until every started server is stopped: its process gone, its port refusing, its directory removed. */
async function expectStopped(list: Started[]): Promise<void> {
  for (const service of list) {
    await pollUntil(
      `${service.kind} pid ${service.pid} to be gone`,
      async () => gone(service.pid) || undefined,
      30_000,
    );
    const probe = service.kind === 'Redis' ? services.probeRedis : services.probePostgres;
    // The kernel may still reset a connection that raced the listener's close: the port must come
    // to refuse connections, and whatever else the probe met is named if it never does.
    let last: string | undefined;
    const refused = await pollUntil(
      `${service.kind} at ${service.url} to refuse connections`,
      async () => {
        last = await probe(service.url);
        return last?.includes('ECONNREFUSED') ? last : undefined;
      },
      10_000,
    ).catch(() => last ?? 'a server still answers');
    expect(refused).toMatch(/ECONNREFUSED/);
    expect(existsSync(service.dir)).toBe(false);
  }
}

/** An address nothing listens on: the probes find no server there. */
async function nowhere(): Promise<string> {
  return `127.0.0.1:${await freeLoopbackPort()}`;
}

/**
 * A Node process that runs the setup with nothing reachable (the probes look where nothing
 * listens), prints `ready <started servers>` and waits to be ended.
 */
async function setUpInChild() {
  const env = { TEST_SERVICES_PROBE_PG: await nowhere(), TEST_SERVICES_PROBE_REDIS: await nowhere() };
  const script = `
    const services = require(${JSON.stringify(MODULE)});
    services.setUpServices({ env: ${JSON.stringify(env)}, log: () => undefined }).then(
      () => { console.log('ready ' + JSON.stringify(services.startedServices())); setInterval(() => {}, 1000); },
      (error) => { console.log('failed ' + error.message); process.exit(1); },
    );`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<Started[]>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = /^(ready|failed) (.*)$/m.exec(output);
      if (line?.[1] === 'ready') resolve(JSON.parse(line[2]) as Started[]);
      else if (line) reject(new Error(line[2]));
    });
    void exited.then((code) => reject(new Error(`the setup process exited (${code}) before it was ready:\n${output}`)));
  });
  return { child, ready, exited };
}

/**
 * The run's own services (test/support/test-services.js): the shared servers when they answer, else
 * a private PostgreSQL from the embedded binaries and a private redis-server, stopped again by the
 * teardown, by SIGTERM, and, after a run was killed outright, by the next setup.
 */
describe('test services: the PostgreSQL and Redis of a Jest run', () => {
  it('uses the servers that answer and starts nothing', async () => {
    const env: NodeJS.ProcessEnv = {
      TEST_SERVICES_PROBE_PG: new URL(PG_ADMIN_URL).host,
      TEST_SERVICES_PROBE_REDIS: new URL(TEST_REDIS_URL).host,
    };
    const lines: string[] = [];
    await services.setUpServices({ env, log: (line) => lines.push(line) });
    expect(services.startedServices()).toEqual([]);
    expect(lines).toEqual([]);
    expect(new URL(env.TEST_PG_URL!).host).toBe(new URL(PG_ADMIN_URL).host);
    expect(env.TEST_REDIS_URL).toBe(`redis://${new URL(TEST_REDIS_URL).host}`);
  });

  it('gives each Jest worker but the first a redis-server of its own, and the teardown stops them', async () => {
    const env: NodeJS.ProcessEnv = {
      TEST_SERVICES_PROBE_PG: new URL(PG_ADMIN_URL).host,
      TEST_SERVICES_PROBE_REDIS: new URL(TEST_REDIS_URL).host,
    };
    const lines: string[] = [];
    let started: Started[] | undefined;
    try {
      await services.setUpServices({ env, log: (line) => lines.push(line), workers: 3 });
      started = services.startedServices();
      expect(started.map((service) => service.kind)).toEqual(['Redis', 'Redis']);
      const shared = `redis://${new URL(TEST_REDIS_URL).host}`;
      expect(env.TEST_REDIS_URL).toBe(shared);
      expect(env.TEST_REDIS_WORKER_URLS).toBe([shared, ...started.map((service) => service.url)].join(' '));
      expect(lines).toEqual([
        `test services: a Redis per Jest worker: 2 redis-server(s) on ${started.map((s) => s.url).join(', ')} besides ${shared}`,
      ]);
      // Each worker (and each process it spawns, which inherits JEST_WORKER_ID) finds its own.
      const urls = ['1', '2', '3'].map((id) => services.redisUrlForWorker({ ...env, JEST_WORKER_ID: id }));
      expect(urls).toEqual([shared, started[0].url, started[1].url]);
      expect(services.redisUrlForWorker({ ...env, JEST_WORKER_ID: undefined })).toBe(shared);
      // Separate servers: a key, a queue or a pub/sub channel of one worker is invisible to the others.
      const [first, second] = urls.slice(1).map((url) => new Redis(url, { maxRetriesPerRequest: 1 }));
      try {
        await first.set('test-services:worker-key', 'two');
        await expect(second.get('test-services:worker-key')).resolves.toBeNull();
        await expect(first.config('GET', 'port')).resolves.not.toEqual(await second.config('GET', 'port'));
      } finally {
        first.disconnect();
        second.disconnect();
      }
    } finally {
      await services.tearDownServices();
    }
    expect(services.startedServices()).toEqual([]);
    await expectStopped(started ?? []);
  });

  it('leaves TEST_PG_URL and TEST_REDIS_URL alone when they are set, whether or not they answer', async () => {
    const env: NodeJS.ProcessEnv = {
      TEST_PG_URL: `postgres://postgres@${await nowhere()}/test`,
      TEST_REDIS_URL: `redis://${await nowhere()}`,
    };
    const given = { ...env };
    await services.setUpServices({ env, log: () => undefined });
    expect(services.startedServices()).toEqual([]);
    expect(env).toEqual(given);
  });

  it(
    'starts PostgreSQL and redis-server on free ports when none answers, points the URLs at them, and the teardown stops them',
    async () => {
      const env: NodeJS.ProcessEnv = {
        TEST_SERVICES_PROBE_PG: await nowhere(),
        TEST_SERVICES_PROBE_REDIS: await nowhere(),
      };
      const lines: string[] = [];
      let started: Started[] | undefined;
      try {
        await services.setUpServices({ env, log: (line) => lines.push(line) });
        started = services.startedServices();
        expect(started.map((service) => service.kind).sort()).toEqual(['PostgreSQL', 'Redis']);
        expect(lines.join('\n')).toContain(`no usable PostgreSQL on ${env.TEST_SERVICES_PROBE_PG}`);
        expect(lines.join('\n')).toContain(`no usable Redis on ${env.TEST_SERVICES_PROBE_REDIS}`);

        const pg = new Client({ connectionString: env.TEST_PG_URL! });
        await pg.connect();
        try {
          const { rows } = await pg.query<{ database: string; port: number }>(
            'SELECT current_database() AS database, inet_server_port() AS port',
          );
          expect(rows[0]).toEqual({ database: 'test', port: Number(new URL(env.TEST_PG_URL!).port) });
          // The tests create their databases on it.
          await pg.query('CREATE DATABASE mcp_test_services_check');
        } finally {
          await pg.end();
        }
        const redis = new Redis(env.TEST_REDIS_URL!, { maxRetriesPerRequest: 1 });
        try {
          await expect(redis.ping()).resolves.toBe('PONG');
          await expect(redis.config('GET', 'save')).resolves.toEqual(['save', '']);
        } finally {
          redis.disconnect();
        }
        expect(new URL(env.TEST_PG_URL!).port).not.toBe(env.TEST_SERVICES_PROBE_PG!.split(':')[1]);
        expect(new URL(env.TEST_REDIS_URL!).port).not.toBe(env.TEST_SERVICES_PROBE_REDIS!.split(':')[1]);
      } finally {
        await services.tearDownServices();
      }
      expect(services.startedServices()).toEqual([]);
      await expectStopped(started ?? []);
    },
    START_MS,
  );

  it('fails at once, saying how to get it, when Redis is needed and redis-server is not installed', async () => {
    const env: NodeJS.ProcessEnv = {
      TEST_PG_URL: PG_ADMIN_URL,
      TEST_SERVICES_PROBE_REDIS: await nowhere(),
      PATH: '/nonexistent',
    };
    await expect(services.setUpServices({ env, log: () => undefined })).rejects.toThrow(
      /^test services: no Redis answers and redis-server is not installed: install it \(apt-get install redis-server/,
    );
    expect(services.startedServices()).toEqual([]);
  });

  it(
    'stops what it started when the run is ended by SIGTERM',
    async () => {
      const setup = await setUpInChild();
      const started = await setup.ready;
      expect(started.map((service) => service.kind).sort()).toEqual(['PostgreSQL', 'Redis']);
      for (const service of started) expect(gone(service.pid)).toBe(false);
      setup.child.kill('SIGTERM');
      expect(await setup.exited).toBe(143);
      await expectStopped(started);
    },
    START_MS,
  );

  it(
    'after a run killed outright (SIGKILL), the next setup stops the servers it left',
    async () => {
      const setup = await setUpInChild();
      const started = await setup.ready;
      setup.child.kill('SIGKILL');
      await setup.exited;
      // Nothing could stop them: they are still there.
      for (const service of started) expect(gone(service.pid)).toBe(false);
      const lines: string[] = [];
      await services.setUpServices({
        env: { TEST_PG_URL: PG_ADMIN_URL, TEST_REDIS_URL },
        log: (line) => lines.push(line),
      });
      expect(lines.filter((line) => line.includes(`killed run (pid ${setup.child.pid})`))).toHaveLength(2);
      await expectStopped(started);
    },
    START_MS,
  );
});
