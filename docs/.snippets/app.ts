// Prelude "app": the imports the examples of these pages use without repeating them, and the
// stand-ins of "stand-ins".
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import {
  Controller,
  Get,
  Inject,
  Injectable,
  Module,
  UnauthorizedException,
  UseFilters,
  UseGuards,
  UseInterceptors,
  UsePipes,
  type CanActivate,
  type ExecutionContext,
  type OnModuleInit,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { IsString } from 'class-validator';
import {
  clientCredentials,
  getMcpContext,
  getMcpRegistryToken,
  getMcpRetentionToken,
  IntrospectionVerifier,
  JwtVerifier,
  MCP_CLIENT_RETENTION,
  MCP_ENTITIES,
  MCP_MIGRATIONS,
  MCP_PARTITIONING_MIGRATIONS,
  McpClientModule,
  McpClientService,
  McpElicitationNotifier,
  McpModule,
  McpPrompt,
  McpRegistry,
  McpResource,
  McpResourceTemplate,
  McpRetentionService,
  McpSamplingHandler,
  McpTool,
  staticToken,
  type McpResourceRequest,
  type McpToolContext,
} from 'durable-mcp';
import { McpUrlElicitationRequiredError } from 'durable-mcp/errors';
import {
  mcpTransports,
  type McpTransport,
  type McpTransportFactory,
  type McpTransportFactoryContext,
} from 'durable-mcp/transports';
import { McpConsoleModule } from 'durable-mcp/console';
import { McpHealthIndicator, McpHealthModule } from 'durable-mcp/health';
import { InjectMcpToolset } from 'durable-mcp/transports';

// @snippet-include stand-ins
