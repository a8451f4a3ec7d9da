import { McpConfigurationError } from './errors/mcp-configuration.errors';

/**
 * Loads an optional peer dependency at the point of use, so that the package loads without it
 * when the feature that needs it is not configured. A missing package becomes an
 * `McpConfigurationError` naming the feature and the install command; any other load failure
 * (a broken install, a missing transitive dependency) is rethrown as is.
 *
 * @param name the package, as it would be imported (`'bull'`, `'ioredis'`)
 * @param feature the option that needs it, for the message (`'McpClientModule redis'`)
 */
export function requireOptionalPeer<T>(name: string, feature: string): T {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer is loaded only when its feature is used
    return require(name) as T;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'MODULE_NOT_FOUND' && (error as Error).message.includes(`'${name}'`)) {
      throw new McpConfigurationError(`${feature} needs the optional peer dependency \`${name}\`: npm install ${name}`);
    }
    throw error;
  }
}
