import { Injectable } from '@nestjs/common';
import type { McpAuthorizer } from '../mcp';
import { demoConfig } from './demo.config';

/** Accepts the tokens listed in MCP_TOKENS; the principal is the name before the `=`. */
@Injectable()
export class DemoTokenAuthorizer implements McpAuthorizer {
  /** @inheritdoc */
  authorize(token: string): string | null {
    return demoConfig.tokens.get(token) ?? null;
  }
}
