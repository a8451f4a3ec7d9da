import { Injectable, UseGuards } from '@nestjs/common';
import { IsInt, IsNumber, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { z } from 'zod';
import { McpTool, type McpToolArgs, type McpToolContext } from '../mcp';
import { DemoThrottlerGuard } from './demo-throttler.guard';

/** Input of `echo`. */
export class EchoInput {
  /** The text to send back. */
  @IsString()
  @MaxLength(10_000)
  text: string;
}

/** Input of `add`. */
export class AddInput {
  @IsNumber()
  a: number;

  @IsNumber()
  b: number;
}

/** Input of `fail`. */
export class FailInput {
  @IsOptional()
  @IsString()
  reason?: string;
}

/** Input of `slow_report`. */
export class SlowReportInput {
  /** How many one-second steps the report takes. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10)
  steps?: number;
}

/** Input of `convert_temperature`: a Zod schema, published as its JSON Schema. */
const TemperatureInput = z.object({
  value: z.number().describe('The temperature to convert'),
  to: z.enum(['celsius', 'fahrenheit']).describe('The scale to convert to (from the other one)'),
});

/** Output of `convert_temperature`. */
const Temperature = z.object({ value: z.number(), unit: z.enum(['celsius', 'fahrenheit']) });

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** The example app's tools. */
@Injectable()
export class DemoTools {
  /** Sends the text back as one text block. */
  @McpTool({
    description: 'Echoes the given text back.',
    input: EchoInput,
    annotations: { readOnlyHint: true, idempotentHint: true },
  })
  echo({ text }: EchoInput): string {
    return text;
  }

  /**
   * Adds two numbers and returns structured output; each caller may call it THROTTLE_LIMIT times
   * per THROTTLE_TTL_MS (the budget of the app's ThrottlerModule), after which the call is an
   * `isError` result.
   */
  @McpTool({
    description: 'Adds two numbers (rate-limited per caller).',
    input: AddInput,
    output: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'], additionalProperties: false },
    annotations: { readOnlyHint: true },
  })
  @UseGuards(DemoThrottlerGuard)
  add({ a, b }: AddInput): { sum: number } {
    return { sum: a + b };
  }

  /** Converts between Celsius and Fahrenheit: input and output declared with Zod. */
  @McpTool({
    description: 'Converts a temperature between Celsius and Fahrenheit.',
    input: TemperatureInput,
    output: Temperature,
    annotations: { readOnlyHint: true, idempotentHint: true },
  })
  convert_temperature({ value, to }: McpToolArgs<typeof TemperatureInput>): z.input<typeof Temperature> {
    const converted = to === 'fahrenheit' ? (value * 9) / 5 + 32 : ((value - 32) * 5) / 9;
    return { value: Math.round(converted * 100) / 100, unit: to };
  }

  /** Fails on purpose, to show an `isError` result. */
  @McpTool({ description: 'Always fails, to show what a failed tool call looks like.', input: FailInput })
  fail({ reason }: FailInput): never {
    throw new Error(reason ?? 'This tool fails on purpose');
  }

  /** Tells the caller who the server thinks they are. */
  @McpTool({
    name: 'whoami',
    description: 'Returns the principal and session the call arrived with.',
    output: {
      type: 'object',
      properties: { principal: { type: 'string' }, sessionId: { type: ['string', 'null'] }, mount: { type: 'string' } },
      required: ['principal', 'sessionId', 'mount'],
    },
  })
  whoami(_input: unknown, ctx: McpToolContext) {
    return { principal: ctx.principal.label, sessionId: ctx.sessionId, mount: ctx.mount };
  }

  /**
   * A long-running report, one second per step, that may run as a task (`task: 'optional'`):
   * each step sets the task's status message and reports progress; `tasks/cancel` stops it.
   * Each caller may start 10 a minute (the built-in `rateLimit`, counted in Redis with REDIS_URL,
   * so the budget holds across replicas); the 11th answers 429 with `Retry-After`.
   */
  @McpTool({
    description: 'Builds a report in a few one-second steps; call it as a task to poll for the result.',
    input: SlowReportInput,
    task: 'optional',
    rateLimit: { limit: 10, windowMs: 60_000 },
  })
  async slow_report({ steps = 3 }: SlowReportInput, ctx: McpToolContext): Promise<string> {
    for (let step = 1; step <= steps; step++) {
      await ctx.task?.update(`step ${step} of ${steps}`);
      await ctx.progress(step - 1, steps, `step ${step} of ${steps}`);
      await pause(1000, ctx.signal);
      if (ctx.signal.aborted) return `Report stopped at step ${step} of ${steps}`;
    }
    return `Report ready after ${steps} steps for ${ctx.principal.label}`;
  }
}
