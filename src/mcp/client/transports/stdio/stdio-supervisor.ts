/**
 * The supervisor: a few lines of Node run as the direct child of `StdioProcess` (with
 * `node -e`), which starts the real server and makes sure it never outlives this process.
 *
 * A server may ignore the end of stdin and SIGTERM, and when this process is SIGKILLed nothing
 * here runs to stop it. The supervisor sits between the two: it starts the server as the leader
 * of a process group of its own (so the group holds the server and what it starts, and not the
 * supervisor) with the same stdin/stdout/stderr, and watches its IPC channel to this process.
 * The kernel closes that channel when this process dies, however it dies; the supervisor then
 * sends SIGTERM to the server's group, waits `graceMs`, and sends SIGKILL.
 *
 * Being outside the group it signals, the supervisor outlives every SIGKILL of the server and
 * reaps it (a killed server is never left a zombie for PID 1 to collect, which a container's
 * PID 1 may never do); it exits once it has.
 * A change of its parent pid (re-parented to init) is checked as well, in case a channel is
 * inherited by something that outlives us.
 *
 * While this process lives, the supervisor stays out of the way: the group signals of the
 * shutdown sequence go to the server's group directly (the supervisor ignores SIGTERM and SIGINT
 * and waits for the server), and it exits the way the server exited, so exit codes, signals and the
 * group-wide SIGKILL of leftovers behave as with a directly spawned server. It reports the
 * server's pid (or why it could not be started) over the channel.
 *
 * Argv: `node -e <source> -- <graceMs> <program> <args...>`. The server's `NODE_OPTIONS` travels
 * as `DURABLE_MCP_SERVER_NODE_OPTIONS`, so it shapes the server and not the supervisor.
 */
export const STDIO_SUPERVISOR_SOURCE = String.raw`'use strict';
const { spawn } = require('node:child_process');
const { constants } = require('node:os');
const graceMs = Number(process.argv[1]) || 0;
const command = process.argv.slice(2);
const env = { ...process.env };
delete env.DURABLE_MCP_SERVER_NODE_OPTIONS;
if (process.env.DURABLE_MCP_SERVER_NODE_OPTIONS !== undefined) env.NODE_OPTIONS = process.env.DURABLE_MCP_SERVER_NODE_OPTIONS;
const parent = process.ppid;
let orphaned = false;
let server;
const group = (signal) => { try { process.kill(-server.pid, signal); } catch {} };
const orphan = () => {
  if (orphaned) return;
  orphaned = true;
  group('SIGTERM');
  setTimeout(() => group('SIGKILL'), graceMs);
};
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => undefined);
process.on('disconnect', orphan);
setInterval(() => { if (process.ppid !== parent) orphan(); }, 500).unref();
server = spawn(command[0], command.slice(1), { stdio: 'inherit', env, windowsHide: true, detached: true });
server.once('spawn', () => { try { process.send({ pid: server.pid }); } catch {} });
server.once('error', (error) => {
  if (server.pid !== undefined) return;
  const report = { spawnError: { code: error.code, message: error.message } };
  try { process.send(report, () => process.exit(127)); } catch { process.exit(127); }
});
server.once('exit', (code, signal) => {
  if (orphaned) group('SIGKILL');
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    setTimeout(() => process.exit(128 + (constants.signals[signal] || 0)), 100);
  } else {
    process.exit(code === null ? 1 : code);
  }
});
`;

/** The message the supervisor sends once: the server's pid, or why it could not be started. */
export type StdioSupervisorReport = { pid: number } | { spawnError: { code?: string; message: string } };
