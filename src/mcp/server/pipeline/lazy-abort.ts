import { InFlightSet } from '../../in-flight-set';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';

/**
 * An abort source that makes its `AbortController` only when someone reads `signal`. Most
 * requests end without anyone aborting them and without any code asking for a signal: those cost
 * one small object instead of a controller, its signal and the listeners wiring them together.
 *
 * `abort` runs once (later calls do nothing). A signal read after the abort is made already
 * aborted, with the reason. A child (`child()`) aborts with its parent, with the parent's reason,
 * and may abort alone; `dispose()` detaches it from its parent once its work ended. A source can
 * also follow an `AbortSignal` it did not make (`follow`), as a child follows its parent.
 */
export class LazyAbort {
  private controller: AbortController | null = null;
  private made: AbortSignal | null = null;
  private fired = false;
  private why: unknown = undefined;
  private children: InFlightSet<LazyAbort> | null = null;
  private parent: LazyAbort | null = null;
  private followed: AbortSignal | null = null;

  /** A source that aborts with `parent` (when given) or on its own `abort`. */
  constructor(parent?: LazyAbort | null) {
    if (!parent) return;
    if (parent.fired) {
      this.fired = true;
      this.why = parent.why;
      return;
    }
    this.parent = parent;
    (parent.children ??= new InFlightSet()).add(this);
  }

  /** A source that aborts when `signal` does (at once when it already did); none when `signal` is absent. */
  static follow(signal: AbortSignal | null | undefined): LazyAbort {
    const source = new LazyAbort();
    if (!signal) return source;
    if (signal.aborted) {
      source.abort(signal.reason);
      return source;
    }
    source.followed = signal;
    signal.addEventListener('abort', source, { once: true });
    return source;
  }

  /** True once aborted; reading it makes nothing. */
  get aborted(): boolean {
    return this.fired;
  }

  /** Why it was aborted (undefined while it was not); reading it makes nothing. */
  get reason(): unknown {
    return this.why;
  }

  /** The signal of this source, made on the first read (already aborted when the abort came first). */
  get signal(): AbortSignal {
    if (this.made) return this.made;
    if (this.fired) return (this.made = AbortSignal.abort(this.why));
    this.controller = new AbortController();
    return (this.made = this.controller.signal);
  }

  /**
   * Aborts with `reason` (an `AbortError` when absent), then every child; once. Detaches from the
   * parent or the followed signal, which no longer need to reach this source.
   */
  abort(reason?: unknown): void {
    if (this.fired) return;
    this.fired = true;
    this.why = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    this.detach();
    this.controller?.abort(this.why);
    const children = this.children;
    this.children = null;
    if (children) for (const child of children) child.abort(this.why);
  }

  /** A source that aborts with this one, with its reason. */
  child(): LazyAbort {
    return new LazyAbort(this);
  }

  /** The work of this source ended: it no longer follows its parent or signal. Aborting stays possible. */
  dispose(): void {
    this.detach();
  }

  /** @internal The followed signal aborted (this object is its listener: no closure per source). */
  handleEvent(): void {
    this.abort((this.followed as AbortSignal).reason);
  }

  private detach(): void {
    if (this.parent) {
      this.parent.children?.delete(this);
      this.parent = null;
    }
    if (this.followed) {
      this.followed.removeEventListener('abort', this);
      this.followed = null;
    }
  }
}

const ABORT_SOURCE = Symbol('durable-mcp abort source');

/** A delivery context that carries its abort source next to the `signal` it stands for. */
type WithAbortSource = McpDeliveryContext & { [ABORT_SOURCE]?: LazyAbort };

/**
 * The `signal` getter of a delivery context built by `withAbortSource`: makes the signal when read.
 * One function for every context, defined on it afterwards: a getter written in an object literal
 * is a new closure each time, and V8 keeps accessors in the hidden class, so each context would
 * get a class of its own (measured on the server at 32 connections: 0.79x the requests a second,
 * six times the GC time).
 */
function sourceSignal(this: WithAbortSource): AbortSignal {
  return (this[ABORT_SOURCE] as LazyAbort).signal;
}

/**
 * Gives `context` the abort source `source`: its `signal` becomes an own, enumerable getter that
 * makes the signal only when read (a spread copy of the context reads it and so keeps a plain
 * signal), and `abortSourceOf` finds the source without making it (on `context` itself, not on a
 * copy).
 */
export function withAbortSource<T extends McpDeliveryContext>(context: T, source: LazyAbort): T {
  // Not enumerable: a spread copy holds a plain signal (read through the getter) and no source,
  // so it cannot pair a source with a signal someone replaced.
  Object.defineProperty(context, ABORT_SOURCE, { value: source, configurable: true });
  Object.defineProperty(context, 'signal', { get: sourceSignal, enumerable: true, configurable: true });
  return context;
}

/** The abort source `withAbortSource` gave `context`, if any. */
export function abortSourceOf(context: McpDeliveryContext): LazyAbort | undefined {
  return (context as WithAbortSource)[ABORT_SOURCE];
}
