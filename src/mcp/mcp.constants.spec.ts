import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  DEFAULT_MOUNT,
  getMcpElicitationNotifierToken,
  getMcpOptionsToken,
  getMcpResourceNotifierToken,
  getMcpRetentionToken,
  getMcpTaskServiceToken,
  getMcpToolsetToken,
  InjectMcpElicitationNotifier,
  InjectMcpResourceNotifier,
  InjectMcpRetention,
  InjectMcpToolset,
} from './mcp.constants';

describe('per-mount injection tokens', () => {
  it('without a mount name, every token names the default mount', () => {
    const pairs: Array<[(m?: string) => string, string]> = [
      [getMcpToolsetToken, 'McpToolset'],
      [getMcpOptionsToken, 'McpOptions'],
      [getMcpRetentionToken, 'McpRetention'],
      [getMcpTaskServiceToken, 'McpTaskService'],
      [getMcpResourceNotifierToken, 'McpResourceNotifier'],
      [getMcpElicitationNotifierToken, 'McpElicitationNotifier'],
    ];
    for (const [token, prefix] of pairs) {
      expect(token()).toBe(`${prefix}:${DEFAULT_MOUNT}`);
      expect(token()).toBe(token(DEFAULT_MOUNT));
      expect(token('admin')).toBe(`${prefix}:admin`);
      expect(token('admin')).not.toBe(token());
    }
  });

  it('the Inject* decorators without a mount resolve the default mount providers, with a mount that mount', async () => {
    @Injectable()
    class Consumer {
      constructor(
        @InjectMcpToolset() readonly toolset: string,
        @InjectMcpRetention() readonly retention: string,
        @InjectMcpResourceNotifier() readonly resources: string,
        @InjectMcpElicitationNotifier() readonly elicitation: string,
        @InjectMcpToolset('admin') readonly adminToolset: string,
        @InjectMcpRetention('admin') readonly adminRetention: string,
        @InjectMcpResourceNotifier('admin') readonly adminResources: string,
        @InjectMcpElicitationNotifier('admin') readonly adminElicitation: string,
      ) {}
    }
    const providers = [
      getMcpToolsetToken,
      getMcpRetentionToken,
      getMcpResourceNotifierToken,
      getMcpElicitationNotifierToken,
    ].flatMap((token) => [
      { provide: token(DEFAULT_MOUNT), useValue: `${token(DEFAULT_MOUNT)}-value` },
      { provide: token('admin'), useValue: `${token('admin')}-value` },
    ]);
    const moduleRef = await Test.createTestingModule({ providers: [...providers, Consumer] }).compile();
    try {
      const consumer = moduleRef.get(Consumer);
      expect(consumer.toolset).toBe('McpToolset:default-value');
      expect(consumer.retention).toBe('McpRetention:default-value');
      expect(consumer.resources).toBe('McpResourceNotifier:default-value');
      expect(consumer.elicitation).toBe('McpElicitationNotifier:default-value');
      expect(consumer.adminToolset).toBe('McpToolset:admin-value');
      expect(consumer.adminRetention).toBe('McpRetention:admin-value');
      expect(consumer.adminResources).toBe('McpResourceNotifier:admin-value');
      expect(consumer.adminElicitation).toBe('McpElicitationNotifier:admin-value');
    } finally {
      await moduleRef.close();
    }
  });
});
