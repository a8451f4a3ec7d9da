/**
 * A content-addressed cache of text on disk, kept between processes and runs in the system's
 * temporary directory: the entry of a computation is found by a hash of everything its output
 * depends on, so an edited input or another version of a tool is simply a new entry and nothing
 * can be read stale. ts-cache.js keeps the children's compiled TypeScript in one, and
 * worker-coverage/raw-coverage.js the instrumented library.
 */
'use strict';

const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

/**
 * The cache named `name` (one directory per user): `cached(keyParts, compute)` returns the text
 * kept under the hash of `keyParts` (strings), or computes, keeps and returns it.
 */
function diskCache(name) {
  const dir = join(tmpdir(), `durable-mcp-${name}-${typeof process.getuid === 'function' ? process.getuid() : 'user'}`);
  return function cached(keyParts, compute) {
    const hash = createHash('sha256');
    for (const part of keyParts) hash.update(part).update('\0');
    const path = join(dir, hash.digest('hex'));
    try {
      return readFileSync(path, 'utf8');
    } catch {
      // not kept yet
    }
    const text = compute();
    // Written under a private name (threads share the pid), then renamed: a concurrent reader sees
    // the whole entry or none.
    mkdirSync(dir, { recursive: true });
    const partial = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    writeFileSync(partial, text);
    renameSync(partial, path);
    return text;
  };
}

module.exports = { diskCache };
