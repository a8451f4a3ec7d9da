/** One budget a call is counted against: at most `limit` calls under `key` per window of `windowMs`. */
export interface RateBudget {
  /** Where the count lives (a Redis key, or a key of the process's map). */
  readonly key: string;
  /** Calls allowed in one window. */
  readonly limit: number;
  /** Length of the window, in milliseconds, counted from the first call of the window. */
  readonly windowMs: number;
}

/** A counter's answer: the call was counted in every budget, or the first spent one refused it and nothing was counted. */
export type RateVerdict =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      /** The position of the spent budget in the list given to `take`. */
      readonly index: number;
      /** When that budget's window closes, in milliseconds from now. */
      readonly retryAfterMs: number;
    };

/** Counts calls against budgets, all of them or none, in one atomic step. */
export interface McpRateCounter {
  /** Counts one call in every budget, or in none when one of them is spent. */
  take(budgets: readonly RateBudget[]): Promise<RateVerdict>;
}

/** The map is swept of closed windows once it holds this many (then twice as many as it kept). */
const SWEEP_FLOOR = 1024;

interface Window {
  count: number;
  endsAt: number;
}

/**
 * The counter of a mount without Redis (and of a replica while Redis is down): fixed windows in
 * the process's memory. A window is forgotten once it closed (when met again, or by a sweep when
 * the map grew), so the map holds at most the windows open now.
 */
export class McpMemoryRateCounter implements McpRateCounter {
  private readonly windows = new Map<string, Window>();
  private sweepAt = SWEEP_FLOOR;

  constructor(private readonly now: () => number = Date.now) {}

  /** @inheritdoc */
  async take(budgets: readonly RateBudget[]): Promise<RateVerdict> {
    return this.takeNow(budgets);
  }

  /** `take`, answered synchronously. */
  takeNow(budgets: readonly RateBudget[]): RateVerdict {
    const now = this.now();
    for (let index = 0; index < budgets.length; index++) {
      const window = this.open(budgets[index].key, now);
      if (window && window.count >= budgets[index].limit)
        return { allowed: false, index, retryAfterMs: window.endsAt - now };
    }
    for (const budget of budgets) {
      const window = this.open(budget.key, now);
      if (window) window.count += 1;
      else this.windows.set(budget.key, { count: 1, endsAt: now + budget.windowMs });
    }
    if (this.windows.size >= this.sweepAt) this.sweep(now);
    return { allowed: true };
  }

  /** How many windows the counter holds (closed ones not swept yet included). */
  get size(): number {
    return this.windows.size;
  }

  private open(key: string, now: number): Window | undefined {
    const window = this.windows.get(key);
    if (window && window.endsAt <= now) {
      this.windows.delete(key);
      return undefined;
    }
    return window;
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
    this.sweepAt = Math.max(SWEEP_FLOOR, this.windows.size * 2);
  }
}
