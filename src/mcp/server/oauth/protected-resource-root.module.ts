import { Module } from '@nestjs/common';
import { McpProtectedResourceRootController } from './protected-resource.controller';
import { McpProtectedResourceMounts } from './protected-resource-mounts';

/**
 * The app-wide part of the Protected Resource Metadata: the root well-known route and the list of
 * mounts it may describe. Every mount imports it; being a plain (not dynamic) module, Nest makes
 * one instance of it per app, so the root route is registered once.
 */
@Module({
  controllers: [McpProtectedResourceRootController],
  providers: [McpProtectedResourceMounts],
  exports: [McpProtectedResourceMounts],
})
export class McpProtectedResourceRootModule {}
