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

/** What a transport knows of a delivery besides its signal, which the abort source stands for. */
export type McpDeliveryFields = Omit<McpDeliveryContext, 'signal'>;

/**
 * A delivery context whose `signal` its abort source makes when read: a request nobody aborts and
 * no code asks a signal of costs no `AbortController`. The fields are plain own properties and
 * `signal` a getter of the class, so every delivery shares one hidden class and building one is an
 * ordinary allocation (an own getter defined on each context was a slow runtime call per request).
 *
 * A spread copy (`{ ...delivery }`) has no `signal`: copy one with `deliveryWith`, which keeps the
 * source.
 */
export class SourcedDelivery implements McpDeliveryContext {
  /** @inheritdoc */
  readonly principal: McpDeliveryContext['principal'];
  /** @inheritdoc */
  readonly sessionId: string | null;
  /** @inheritdoc */
  readonly protocolVersion: string;
  /** @inheritdoc */
  readonly clientCapabilities: McpDeliveryContext['clientCapabilities'];
  /** @inheritdoc */
  readonly logLevel: McpDeliveryContext['logLevel'];
  /** @inheritdoc */
  notify: McpDeliveryContext['notify'];
  /** @inheritdoc */
  client: McpDeliveryContext['client'];
  /** @inheritdoc */
  task: McpDeliveryContext['task'];
  /** @inheritdoc */
  beginTask: McpDeliveryContext['beginTask'];

  constructor(
    fields: McpDeliveryFields,
    /** What `signal` stands for: aborted by every reason the transport has to stop the work. */
    readonly abortSource: LazyAbort,
  ) {
    this.principal = fields.principal;
    this.sessionId = fields.sessionId;
    this.protocolVersion = fields.protocolVersion;
    this.clientCapabilities = fields.clientCapabilities;
    this.logLevel = fields.logLevel;
    this.notify = fields.notify;
    this.client = fields.client;
    this.task = fields.task;
    this.beginTask = fields.beginTask;
  }

  /** The abort source's signal, made on this first read. */
  get signal(): AbortSignal {
    return this.abortSource.signal;
  }
}

/** The abort source of a delivery built as a `SourcedDelivery`, if it is one. */
export function abortSourceOf(context: McpDeliveryContext): LazyAbort | undefined {
  return context instanceof SourcedDelivery ? context.abortSource : undefined;
}

/**
 * A copy of `context` with `changes`: a `SourcedDelivery` stays one, with the same abort source
 * (a spread copy would drop its `signal`); any other context is spread.
 */
export function deliveryWith(context: McpDeliveryContext, changes: Partial<McpDeliveryFields>): McpDeliveryContext {
  if (context instanceof SourcedDelivery) return new SourcedDelivery({ ...context, ...changes }, context.abortSource);
  return { ...context, ...changes };
}
