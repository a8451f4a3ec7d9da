/** Configuration messages of the stdio transport: each says what is wrong and how to fix it. */

const ARGV_HINT =
  'Pass the program and its arguments as an argv array, e.g. command: ["node", "server.js", "--stdio"]; ' +
  'it is started without a shell, so quoting, pipes, "&&" and variable expansion are not available.';

/** `command` was given as one shell string. */
export const shellStringCommandMessage = (command: string): string =>
  `StdioTransport: "command" is the string ${JSON.stringify(command)}, but it must be an argv array of strings. ${ARGV_HINT}`;

/** `command` is not a usable argv array; `reason` says why. */
export const invalidArgvMessage = (reason: string): string => `StdioTransport: "command" ${reason}. ${ARGV_HINT}`;

/** A `{ command }` entry without `args` whose command would need a shell to be split. */
export const whitespaceCommandMessage = (command: string): string =>
  `MCP server config: "command" is ${JSON.stringify(command)} and has no "args". The command is run without a shell, ` +
  `so it must name one program only. Put the program in "command" and each argument in "args", ` +
  `e.g. { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"] }.`;

/** A `{ command, args }` entry of the wrong shape. */
export const invalidServerConfigMessage = (reason: string): string =>
  `MCP server config: ${reason}. Use { "command": "program", "args": ["arg1", "arg2"] }.`;

/** An option of the wrong type or range. */
export const invalidStdioOptionMessage = (option: string, expected: string): string =>
  `StdioTransport: option "${option}" must be ${expected}.`;

/** `pool` was set without declaring the server stateless. */
export const poolNeedsStatelessMessage = (): string =>
  'StdioTransport: "pool" reuses one server process for calls made for different callers, which is only safe for a ' +
  'server that keeps no state between requests. Declare it with stateless: true next to pool, or remove "pool" to ' +
  'spawn one process per call.';
