import Redis from 'ioredis';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a JavaScript module Jest's globalSetup and the scripts share, outside the TypeScript project
const { redisUrlForWorker } = require('./test-services.js') as { redisUrlForWorker: () => string };

/**
 * The Redis every test of this Jest worker talks to: TEST_REDIS_URL, which Jest's globalSetup sets
 * to the shared server or to one it started, or, when the run has several workers, the worker's own
 * (test/support/test-services.js); outside Jest, the shared server's default address.
 */
export const TEST_REDIS_URL = redisUrlForWorker();

/** Host and port of `TEST_REDIS_URL`, to tell connections to it apart from others. */
export const TEST_REDIS_ADDRESS = (() => {
  const url = new URL(TEST_REDIS_URL);
  return { host: url.hostname, port: Number(url.port || 6379) };
})();

/**
 * Deletes every key matching each glob `pattern` (SCAN, not KEYS) and returns how many were
 * deleted. Suites call it in `afterAll` with their own unique prefix, so nothing is left behind.
 */
export async function deleteRedisKeys(...patterns: string[]): Promise<number> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  let deleted = 0;
  try {
    await redis.connect();
    for (const pattern of patterns) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        cursor = next;
        if (keys.length) deleted += await redis.del(...keys);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
  return deleted;
}

/** Keys matching `pattern` that exist now. */
export async function listRedisKeys(pattern: string): Promise<string[]> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const found: string[] = [];
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return found;
}
