import { McpConfigurationError } from '../../../errors/mcp-configuration.errors';
import {
  invalidArgvMessage,
  invalidServerConfigMessage,
  shellStringCommandMessage,
  whitespaceCommandMessage,
} from './stdio.messages';

/** A server entry as Claude Desktop's `mcpServers` file declares it. */
export interface StdioServerConfig {
  /** The program to run (one program, no arguments unless `args` is absent and it has no spaces). */
  command: string;
  /** Its arguments, one per entry. */
  args?: readonly string[];
}

/**
 * Checks that `command` is a non-empty argv array of strings whose first entry names a program.
 * A string (a shell command line) is rejected with a message explaining argv.
 * @throws McpConfigurationError
 */
export function assertStdioArgv(command: unknown): asserts command is readonly string[] {
  if (typeof command === 'string') {
    throw new McpConfigurationError(shellStringCommandMessage(command));
  }
  if (!Array.isArray(command)) {
    throw new McpConfigurationError(
      invalidArgvMessage(`must be an array of strings, got ${command === null ? 'null' : typeof command}`),
    );
  }
  if (command.length === 0) {
    throw new McpConfigurationError(invalidArgvMessage('is an empty array'));
  }
  const bad = command.findIndex((part) => typeof part !== 'string' || part.includes('\0'));
  if (bad !== -1) {
    throw new McpConfigurationError(
      invalidArgvMessage(`has an entry at index ${bad} that is not a string without NUL characters`),
    );
  }
  if ((command[0] as string).trim().length === 0) {
    throw new McpConfigurationError(invalidArgvMessage('starts with an empty program name'));
  }
}

/**
 * Builds an argv array from a Claude-Desktop style `{ command, args }` entry.
 * Without `args`, a command containing whitespace is rejected: it would have needed a shell to
 * split it, and the transport never uses one.
 * @throws McpConfigurationError
 */
export function toStdioArgv(config: StdioServerConfig): string[] {
  if (typeof config !== 'object' || config === null) {
    throw new McpConfigurationError(invalidServerConfigMessage('the entry must be an object'));
  }
  const { command, args } = config;
  if (typeof command !== 'string' || command.trim().length === 0) {
    throw new McpConfigurationError(invalidServerConfigMessage('"command" must be a non-empty string'));
  }
  if (args === undefined) {
    if (/\s/.test(command)) {
      throw new McpConfigurationError(whitespaceCommandMessage(command));
    }
    return [command];
  }
  if (!Array.isArray(args) || args.some((arg) => typeof arg !== 'string')) {
    throw new McpConfigurationError(invalidServerConfigMessage('"args" must be an array of strings'));
  }
  const argv = [command, ...(args as string[])];
  assertStdioArgv(argv);
  return argv;
}
