import type { McpGatewayModuleOptions } from './mcp-gateway.options';

/** A pattern of `allow` / `deny` as a whole-name expression: `*` is any run of characters, the rest literal. */
function patternExpression(pattern: string): RegExp {
  const literal = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literal.join('.*')}$`, 's');
}

/**
 * Decides which names of one upstream the mount re-serves: those `allow` matches (every name
 * when it is empty) that `deny` does not.
 */
export class UpstreamSelection {
  private readonly allow: RegExp[];
  private readonly deny: RegExp[];

  constructor(upstream: Pick<Required<McpGatewayModuleOptions.Upstream>, 'allow' | 'deny'>) {
    this.allow = upstream.allow.map(patternExpression);
    this.deny = upstream.deny.map(patternExpression);
  }

  /** True when the mount re-serves the upstream's `name` (a tool or prompt name, or a resource URI). */
  selects(name: string): boolean {
    if (this.deny.some((pattern) => pattern.test(name))) return false;
    return this.allow.length === 0 || this.allow.some((pattern) => pattern.test(name));
  }
}
