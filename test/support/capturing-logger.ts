import type { LoggerService } from '@nestjs/common';

/** A Nest logger that keeps every line at every level, so a suite can search them (e.g. for a leaked token). */
export class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  private keep(level: string, message: unknown, rest: unknown[]): void {
    this.lines.push(
      [level, message, ...rest]
        .map((part) =>
          typeof part === 'string'
            ? part
            : part instanceof Error
              ? `${part.message} ${part.stack}`
              : JSON.stringify(part),
        )
        .join(' '),
    );
  }
  log(message: unknown, ...rest: unknown[]) {
    this.keep('log', message, rest);
  }
  error(message: unknown, ...rest: unknown[]) {
    this.keep('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]) {
    this.keep('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]) {
    this.keep('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]) {
    this.keep('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]) {
    this.keep('fatal', message, rest);
  }
}
