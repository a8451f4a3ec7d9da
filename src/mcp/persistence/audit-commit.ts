import { assertKnownOptions, McpConfigurationError, optionKeys } from '../errors/mcp-configuration.errors';
import type { McpAuditOptions } from './interfaces/mcp-audit-options.interface';

const AUDIT_OPTION_KEYS = optionKeys<McpAuditOptions>({ commit: true });

/**
 * The commit mode of an `audit` option (`McpModule` and `McpClientModule` both take one): `'sync'`
 * when left out. `invalid(option, expected)` builds the configuration message of the module
 * that reads it; `where` names that module in an unknown-key error.
 */
export function resolveAuditCommit(
  audit: McpAuditOptions | undefined,
  invalid: (option: string, expected: string) => string,
  where: string,
): 'sync' | 'async' {
  if (audit === undefined) return 'sync';
  if (audit === null || typeof audit !== 'object' || Array.isArray(audit))
    throw new McpConfigurationError(invalid('audit', "an object like { commit: 'async' }"));
  assertKnownOptions(audit, AUDIT_OPTION_KEYS, `${where} option "audit"`);
  const commit = audit.commit ?? 'sync';
  if (commit !== 'sync' && commit !== 'async')
    throw new McpConfigurationError(invalid('audit.commit', "'sync' or 'async'"));
  return commit;
}
