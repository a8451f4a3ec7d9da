import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import { resolveClientOptions } from '../client/config/client-options-resolver';
import { resolveMcpOptions } from '../server/config/mcp.options';
import type { McpTelemetryOptions } from './mcp-telemetry.options';

const auth = () => 'alice';
const extras = { mount: 'main', path: '/mcp' };

describe('the telemetry option of McpModule and McpClientModule', () => {
  it('defaults to no payloads and 1024 characters', () => {
    expect(resolveMcpOptions({ auth }, extras).telemetry).toEqual({ recordPayloads: false, maxPayloadLength: 1024 });
    expect(resolveClientOptions({}).telemetry).toEqual({ recordPayloads: false, maxPayloadLength: 1024 });
  });

  it('takes the opt-in on both modules', () => {
    expect(
      resolveMcpOptions({ auth, advanced: { telemetry: { recordPayloads: true, maxPayloadLength: 64 } } }, extras)
        .telemetry,
    ).toEqual({ recordPayloads: true, maxPayloadLength: 64 });
    expect(resolveClientOptions({ advanced: { telemetry: { recordPayloads: true } } }).telemetry).toEqual({
      recordPayloads: true,
      maxPayloadLength: 1024,
    });
  });

  it.each([
    [{ recordPayload: true }, 'unknown option "recordPayload" (did you mean "recordPayloads"?'],
    [{ recordPayloads: 'yes' }, 'telemetry.recordPayloads'],
    [{ maxPayloadLength: 8 }, 'telemetry.maxPayloadLength'],
    [{ maxPayloadLength: 10.5 }, 'telemetry.maxPayloadLength'],
    [true, 'telemetry" must be an object'],
  ])('refuses %p at boot on both modules', (telemetry, message) => {
    const options = telemetry as unknown as McpTelemetryOptions;
    expect(() => resolveMcpOptions({ auth, advanced: { telemetry: options } }, extras)).toThrow(McpConfigurationError);
    expect(() => resolveMcpOptions({ auth, advanced: { telemetry: options } }, extras)).toThrow(message);
    expect(() => resolveClientOptions({ advanced: { telemetry: options } })).toThrow(McpConfigurationError);
    expect(() => resolveClientOptions({ advanced: { telemetry: options } })).toThrow(message);
  });
});
