/**
 * Turns "Jest did not exit" into a report that says why, and an end. Suites that run in this
 * process (a run in band, or the `e2e-serial` project; Jest ends its workers itself): when the run is over
 * and something a test started still holds the event loop (a socket, a server, a child process, a
 * timer), this reporter prints each such handle after a grace
 * period and then ends the process with the run's own result (1 when a test failed), instead of
 * letting the run hang until an outer timeout kills it with nothing to show. To find the suite that
 * left a handle, run with `LEAK_CHECK=1` (test/support/leak-check.environment.js).
 */
const GRACE_MS = Number(process.env.OPEN_HANDLES_GRACE_MS || 10000);

function describeHandle(handle) {
  const kind = handle && handle.constructor ? handle.constructor.name : typeof handle;
  try {
    if (kind === 'Socket' || kind === 'TLSSocket') {
      if (handle.destroyed) return null;
      const local = handle.localPort ? `${handle.localAddress}:${handle.localPort}` : 'unbound';
      const remote = handle.remotePort ? `${handle.remoteAddress}:${handle.remotePort}` : 'no peer';
      const pipe = handle._type === 'pipe' || handle._handle?.constructor?.name === 'Pipe' ? ' (pipe)' : '';
      if (handle === process.stdout || handle === process.stderr || handle === process.stdin) return null;
      return `${kind}${pipe} ${local} -> ${remote}`;
    }
    if (kind === 'Server') {
      const address = handle.address();
      return `Server listening on ${typeof address === 'string' ? address : address && `${address.address}:${address.port}`}`;
    }
    if (kind === 'ChildProcess') {
      return `ChildProcess pid ${handle.pid}: ${[handle.spawnfile, ...(handle.spawnargs || []).slice(1)].join(' ').slice(0, 300)}`;
    }
    if (kind === 'Timeout' || kind === 'Immediate') {
      if (kind === 'Timeout' && typeof handle.hasRef === 'function' && !handle.hasRef()) return null;
      const callback = handle._onTimeout || handle._onImmediate;
      const source = callback ? String(callback).replace(/\s+/g, ' ').slice(0, 300) : '?';
      return `${kind} every/after ${handle._idleTimeout ?? '?'} ms: ${source}`;
    }
  } catch (error) {
    return `${kind} (could not describe: ${error && error.message})`;
  }
  return kind;
}

class OpenHandlesReporter {
  onRunComplete() {
    const timer = setTimeout(() => {
      const handles = (process._getActiveHandles ? process._getActiveHandles() : [])
        .map(describeHandle)
        .filter(Boolean);
      const resources = process.getActiveResourcesInfo ? process.getActiveResourcesInfo() : [];
      process.stderr.write(
        `\nopen handles: the run ended ${GRACE_MS} ms ago and these still hold the process:\n` +
          handles.map((line) => `  - ${line}\n`).join('') +
          `  resources: ${resources.join(', ')}\n` +
          "A test left them open; ending the process with the run's own exit code instead of hanging. LEAK_CHECK=1 names the suite.\n",
      );
      // No code here: Jest's own 'exit' listener sets the run's exit code (failed tests, coverage).
      process.exit();
    }, GRACE_MS);
    timer.unref();
  }
}

module.exports = OpenHandlesReporter;
module.exports.describeHandle = describeHandle;
