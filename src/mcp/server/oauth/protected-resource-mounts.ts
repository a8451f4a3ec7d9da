import { Injectable } from '@nestjs/common';
import type { McpResolvedOAuthOptions } from '../config/mcp-oauth.options';

/** The `oauth` settings of every mount of one app, in registration order. */
@Injectable()
export class McpProtectedResourceMounts {
  private readonly mounts: { atRoot: boolean; oauth: McpResolvedOAuthOptions }[] = [];

  /** Registers a mount; mounts without `oauth` are not listed. */
  add(atRoot: boolean, oauth: McpResolvedOAuthOptions | undefined): void {
    if (oauth) this.mounts.push({ atRoot, oauth });
  }

  /** The `oauth` settings of every mount, in registration order. */
  all(): McpResolvedOAuthOptions[] {
    return this.mounts.map((mount) => mount.oauth);
  }

  /** The settings the root metadata path describes: the root mount's, else the first registered; undefined when none. */
  root(): McpResolvedOAuthOptions | undefined {
    return (this.mounts.find((mount) => mount.atRoot) ?? this.mounts[0])?.oauth;
  }
}
