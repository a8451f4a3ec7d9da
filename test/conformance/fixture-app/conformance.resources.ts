import { Injectable } from '@nestjs/common';
import { McpResource, McpResourceTemplate, type McpResourceRequest } from '../../../src/mcp';
import { RED_PIXEL_PNG } from './fixture-media';

/**
 * The resources of the conformance suite (`resources-*`, `caching`, `sep-2164-*`), as
 * `@McpResource` / `@McpResourceTemplate` methods.
 */
@Injectable()
export class ConformanceResources {
  @McpResource({
    uri: 'test://static-text',
    name: 'static-text',
    description: 'A static text resource.',
    mimeType: 'text/plain',
  })
  staticText(): string {
    return 'This is the content of the static text resource.';
  }

  @McpResource({
    uri: 'test://static-binary',
    name: 'static-binary',
    description: 'A static binary resource (a PNG).',
    mimeType: 'image/png',
  })
  staticBinary(): Buffer {
    return Buffer.from(RED_PIXEL_PNG, 'base64');
  }

  @McpResource({
    uri: 'test://watched-resource',
    name: 'watched-resource',
    description: 'A resource clients may subscribe to.',
    mimeType: 'text/plain',
  })
  watched(): string {
    return 'Watched resource content.';
  }

  @McpResourceTemplate({
    uriTemplate: 'test://template/{id}/data',
    name: 'template-data',
    description: 'Data for one id, from a URI template.',
    mimeType: 'application/json',
  })
  templateData({ params }: McpResourceRequest): string {
    return JSON.stringify({ id: params.id, templateTest: true, data: `Data for ID: ${params.id}` });
  }
}
