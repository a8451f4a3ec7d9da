import { McpConfigurationError } from './errors/mcp-configuration.errors';
import { requireOptionalPeer } from './optional-peer';

describe('requireOptionalPeer', () => {
  it('returns the package when it is installed', () => {
    expect(requireOptionalPeer<typeof import('bull')>('bull', 'McpClientModule redis (Bull)')).toBe(
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- compared with what require() itself returns
      require('bull'),
    );
  });

  it('names the feature and the install command when the package is missing', () => {
    const load = () => requireOptionalPeer('durable-mcp-no-such-package', 'pubsub.redis');
    expect(load).toThrow(McpConfigurationError);
    expect(load).toThrow(
      'pubsub.redis needs the optional peer dependency `durable-mcp-no-such-package`: npm install durable-mcp-no-such-package',
    );
  });
});
