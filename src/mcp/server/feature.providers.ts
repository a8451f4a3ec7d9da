import type { Provider } from '@nestjs/common';
import { getMcpElicitationNotifierToken, getMcpResourceNotifierToken } from '../mcp.constants';
import { CompletionFeature } from './features/completion.feature';
import { LoggingFeature } from './features/logging.feature';
import { McpElicitationNotifier } from './features/mcp-elicitation-notifier';
import { McpResourceNotifier } from './features/mcp-resource-notifier';
import { PromptsFeature } from './features/prompts.feature';
import { ResourceSubscriptionsFeature } from './features/resource-subscriptions.feature';
import { ResourcesFeature } from './features/resources.feature';
import { getMcpRegistryToken, McpRegistry } from './registry/mcp-registry';

/**
 * The providers of the server features of one mount beyond tools: resources (with durable
 * subscriptions in the mount's `MCP_SUBSCRIPTION_STORE` and the notifier app code injects), prompts, completion and logging.
 * `FeaturesExplorer` fills and installs them at boot.
 */
export function createMcpFeatureProviders(mount: string): Provider[] {
  return [
    ResourcesFeature,
    ResourceSubscriptionsFeature,
    McpResourceNotifier,
    { provide: getMcpResourceNotifierToken(mount), useExisting: McpResourceNotifier },
    McpElicitationNotifier,
    { provide: getMcpElicitationNotifierToken(mount), useExisting: McpElicitationNotifier },
    PromptsFeature,
    CompletionFeature,
    LoggingFeature,
  ];
}

/** What a serving mount exports for app code: its resource and elicitation notifiers and its registry (`createMcpServerParts`), by class and by mount token. */
export function mcpFeatureExports(
  mount: string,
): (string | typeof McpResourceNotifier | typeof McpElicitationNotifier | typeof McpRegistry)[] {
  return [
    McpResourceNotifier,
    getMcpResourceNotifierToken(mount),
    McpElicitationNotifier,
    getMcpElicitationNotifierToken(mount),
    McpRegistry,
    getMcpRegistryToken(mount),
  ];
}
