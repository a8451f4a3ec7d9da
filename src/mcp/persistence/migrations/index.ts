import type { Type } from '@nestjs/common';
import type { MigrationInterface } from 'typeorm';
import { CreateMcpTables1764489600000 } from './1764489600000-CreateMcpTables';
import { AddMcpServerFeatures1764576000000 } from './1764576000000-AddMcpServerFeatures';
import { AddOutboundSessionEndpoint1767225600000 } from './1767225600000-AddOutboundSessionEndpoint';
import { AddMcpHandlerSwitches1767312000000 } from './1767312000000-AddMcpHandlerSwitches';
import { AddMcpTasks1767398400000 } from './1767398400000-AddMcpTasks';
import { AddMcpEventTraceId1767484800000 } from './1767484800000-AddMcpEventTraceId';
import { AddMcpRetentionIndexes1767571200000 } from './1767571200000-AddMcpRetentionIndexes';
import { AddMcpOAuthGrants1767744000000 } from './1767744000000-AddMcpOAuthGrants';
import { AddMcpOAuthClients1767830400000 } from './1767830400000-AddMcpOAuthClients';
import { AddMcpEventPrincipalIndex1767916800000 } from './1767916800000-AddMcpEventPrincipalIndex';
import { AddMcpOAuthProviderRecords1768003200000 } from './1768003200000-AddMcpOAuthProviderRecords';
import { McpEventsPartitioning1767657600000 } from './1767657600000-McpEventsPartitioning';

export {
  CreateMcpTables1764489600000,
  AddMcpServerFeatures1764576000000,
  AddOutboundSessionEndpoint1767225600000,
  AddMcpHandlerSwitches1767312000000,
  AddMcpTasks1767398400000,
  AddMcpEventTraceId1767484800000,
  AddMcpRetentionIndexes1767571200000,
  McpEventsPartitioning1767657600000,
  AddMcpOAuthGrants1767744000000,
  AddMcpOAuthClients1767830400000,
  AddMcpEventPrincipalIndex1767916800000,
  AddMcpOAuthProviderRecords1768003200000,
};

/** The PostgreSQL migrations of the package, oldest first: add them to the host's DataSource `migrations`. */
export const MCP_MIGRATIONS: Type<MigrationInterface>[] = [
  CreateMcpTables1764489600000,
  AddMcpServerFeatures1764576000000,
  AddOutboundSessionEndpoint1767225600000,
  AddMcpHandlerSwitches1767312000000,
  AddMcpTasks1767398400000,
  AddMcpEventTraceId1767484800000,
  AddMcpRetentionIndexes1767571200000,
  AddMcpOAuthGrants1767744000000,
  AddMcpOAuthClients1767830400000,
  AddMcpEventPrincipalIndex1767916800000,
  AddMcpOAuthProviderRecords1768003200000,
];

/**
 * Optional, PostgreSQL only: partitions `mcp_events` by day so the retention pruner drops whole
 * days. Not part of `MCP_MIGRATIONS`; list it after them: `[...MCP_MIGRATIONS, ...MCP_PARTITIONING_MIGRATIONS]`.
 */
export const MCP_PARTITIONING_MIGRATIONS: Type<MigrationInterface>[] = [McpEventsPartitioning1767657600000];
