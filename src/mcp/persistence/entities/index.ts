import type { Type } from '@nestjs/common';
import { McpEvent } from './mcp-event.entity';
import { McpHandlerSwitch } from './handler-switch.entity';
import { McpInboundSession } from './inbound-session.entity';
import { McpOAuthAuthorization } from './oauth-authorization.entity';
import { McpOAuthClient } from './oauth-client.entity';
import { McpOAuthGrant } from './oauth-grant.entity';
import { McpOAuthProviderRecord } from './oauth-provider-record.entity';
import { McpOutboundSession } from './outbound-session.entity';
import { McpResourceSubscription } from './resource-subscription.entity';
import { McpTask } from './task.entity';

export {
  McpEvent,
  McpHandlerSwitch,
  McpInboundSession,
  McpOAuthAuthorization,
  McpOAuthClient,
  McpOAuthGrant,
  McpOAuthProviderRecord,
  McpOutboundSession,
  McpResourceSubscription,
  McpTask,
};
export type { McpEventDirection } from './mcp-event.entity';

/** Every entity of the package: add them to the host's `TypeOrmModule.forRoot({ entities })`. */
export const MCP_ENTITIES: Type[] = [
  McpInboundSession,
  McpEvent,
  McpOutboundSession,
  McpResourceSubscription,
  McpHandlerSwitch,
  McpTask,
  McpOAuthGrant,
  McpOAuthAuthorization,
  McpOAuthClient,
  McpOAuthProviderRecord,
];
