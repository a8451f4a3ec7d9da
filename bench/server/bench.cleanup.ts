/**
 * Undo steps of a benchmark run (stop servers, drop the database), run last-in first-out exactly
 * once: at the end of the run, or when SIGINT/SIGTERM interrupts it.
 */
export class BenchCleanup {
  private readonly steps: { name: string; run: () => Promise<void> }[] = [];
  private running: Promise<void> | null = null;

  /** Registers one undo step. */
  add(name: string, run: () => Promise<void>): void {
    this.steps.push({ name, run });
  }

  /** Runs every step once, newest first; a failing step is reported and the others still run. */
  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await step.run();
        } catch (error) {
          console.error(`cleanup: ${step.name} failed: ${(error as Error)?.message ?? String(error)}`);
        }
      }
    })();
    return this.running;
  }

  /** Makes SIGINT and SIGTERM clean up before the process exits (130 / 143). */
  exitOnSignals(): void {
    const onSignal = (signal: NodeJS.Signals, code: number) => {
      console.error(`\n${signal}: stopping servers and dropping the database...`);
      void this.run().finally(() => process.exit(code));
    };
    process.once('SIGINT', () => onSignal('SIGINT', 130));
    process.once('SIGTERM', () => onSignal('SIGTERM', 143));
  }
}

/**
 * Runs a benchmark's `main` with a cleanup that SIGINT and SIGTERM run too, then cleans up and
 * exits with the code `main` resolved to. A failure prints `<name> failed: ` and the error's
 * `detail` (its message, or its stack) and exits 1 once cleaned up.
 */
export function runBench(
  name: string,
  main: (cleanup: BenchCleanup) => Promise<number>,
  detail: 'message' | 'stack' = 'message',
): void {
  const cleanup = new BenchCleanup();
  cleanup.exitOnSignals();
  void main(cleanup)
    .catch((error: unknown) => {
      console.error(`${name} failed: ${(error as Error)?.[detail] ?? String(error)}`);
      return 1;
    })
    .then(async (code) => {
      await cleanup.run();
      process.exit(code);
    });
}
