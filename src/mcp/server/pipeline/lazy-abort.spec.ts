import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import { LazyAbort, SourcedDelivery, abortSourceOf, deliveryWith } from './lazy-abort';

/** Counts the AbortControllers made while `work` runs (a subclass standing in for the global one). */
function controllersMadeBy(work: () => void): number {
  const Original = globalThis.AbortController;
  let made = 0;
  globalThis.AbortController = class extends Original {
    constructor() {
      super();
      made++;
    }
  };
  try {
    work();
  } finally {
    globalThis.AbortController = Original;
  }
  return made;
}

const delivery = (): McpDeliveryContext => ({
  principal: { key: 'p', subject: 'p', scopes: [], roles: [], claims: {} } as never,
  sessionId: null,
  protocolVersion: '2025-11-25',
});

describe('LazyAbort', () => {
  it('makes no AbortController until the signal is read, and the same signal on every read', () => {
    let source!: LazyAbort;
    expect(
      controllersMadeBy(() => {
        source = new LazyAbort();
        source.child().dispose();
        expect(source.aborted).toBe(false);
        expect(source.reason).toBeUndefined();
      }),
    ).toBe(0);
    let first!: AbortSignal;
    expect(controllersMadeBy(() => (first = source.signal))).toBe(1);
    expect(controllersMadeBy(() => expect(source.signal).toBe(first))).toBe(0);
    expect(first.aborted).toBe(false);
  });

  it('aborts a signal already read, with the reason, once', () => {
    const source = new LazyAbort();
    const signal = source.signal;
    const seen: unknown[] = [];
    signal.addEventListener('abort', () => seen.push(signal.reason));
    const reason = new Error('first');
    source.abort(reason);
    source.abort(new Error('second'));
    expect(source.aborted).toBe(true);
    expect(source.reason).toBe(reason);
    expect(signal.aborted).toBe(true);
    expect(seen).toEqual([reason]);
  });

  it('hands out a signal already aborted, with the reason, when the abort came before the read', () => {
    const source = new LazyAbort();
    const reason = new Error('gone');
    let signal!: AbortSignal;
    expect(
      controllersMadeBy(() => {
        source.abort(reason);
        signal = source.signal;
      }),
    ).toBe(0);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);
    expect(source.signal).toBe(signal);
  });

  it('aborts with an AbortError when no reason is given, the same one on the signal', () => {
    const source = new LazyAbort();
    source.abort();
    expect(source.reason).toBeInstanceOf(DOMException);
    expect((source.reason as DOMException).name).toBe('AbortError');
    expect(source.signal.reason).toBe(source.reason);
  });

  it('aborts its children (and theirs) with its reason; a child aborts alone without its parent', () => {
    const parent = new LazyAbort();
    const child = parent.child();
    const grandchild = child.child();
    const sibling = parent.child();
    const childSignal = child.signal;
    sibling.abort(new Error('cancelled'));
    expect(parent.aborted).toBe(false);
    expect(child.aborted).toBe(false);
    const reason = new Error('drain deadline');
    parent.abort(reason);
    expect(child.reason).toBe(reason);
    expect(childSignal.reason).toBe(reason);
    expect(grandchild.signal.reason).toBe(reason);
    expect((sibling.reason as Error).message).toBe('cancelled');
  });

  it('makes a child of an aborted parent already aborted, with the reason', () => {
    const parent = new LazyAbort();
    const reason = new Error('closed');
    parent.abort(reason);
    const child = new LazyAbort(parent);
    expect(child.aborted).toBe(true);
    expect(child.signal.reason).toBe(reason);
  });

  it('no longer follows its parent once disposed (twice is harmless), and may still abort', () => {
    const parent = new LazyAbort();
    const child = parent.child();
    child.dispose();
    child.dispose();
    parent.abort(new Error('later'));
    expect(child.aborted).toBe(false);
    child.abort(new Error('own'));
    expect((child.signal.reason as Error).message).toBe('own');
  });

  describe('follow', () => {
    it('gives a source of its own without a signal to follow', () => {
      const source = LazyAbort.follow(undefined);
      expect(source.aborted).toBe(false);
      source.abort(new Error('x'));
      expect(source.aborted).toBe(true);
    });

    it('is aborted at once, with the reason, when the followed signal already aborted', () => {
      const reason = new Error('before');
      const source = LazyAbort.follow(AbortSignal.abort(reason));
      expect(source.aborted).toBe(true);
      expect(source.reason).toBe(reason);
    });

    it('aborts with the followed signal, with its reason, and its children too', () => {
      const controller = new AbortController();
      const source = LazyAbort.follow(controller.signal);
      const child = source.child();
      const reason = new Error('client gone');
      controller.abort(reason);
      expect(source.reason).toBe(reason);
      expect(child.signal.reason).toBe(reason);
    });

    it('stops following once disposed or aborted on its own', () => {
      const controller = new AbortController();
      const disposed = LazyAbort.follow(controller.signal);
      const own = LazyAbort.follow(controller.signal);
      disposed.dispose();
      own.abort(new Error('own'));
      controller.abort(new Error('later'));
      expect(disposed.aborted).toBe(false);
      expect((own.reason as Error).message).toBe('own');
    });
  });

  describe('SourcedDelivery', () => {
    it('makes the signal only when it is read, and gives its source to abortSourceOf', () => {
      const source = new LazyAbort();
      let context!: McpDeliveryContext;
      expect(controllersMadeBy(() => (context = new SourcedDelivery(delivery(), source)))).toBe(0);
      expect(abortSourceOf(context)).toBe(source);
      expect(controllersMadeBy(() => context.signal)).toBe(1);
      expect(context.signal).toBe(source.signal);
      source.abort(new Error('stop'));
      expect(context.signal?.aborted).toBe(true);
    });

    it('keeps every field it was given, with the same own keys whatever it holds', () => {
      const notify = (): void => undefined;
      const plain = new SourcedDelivery(delivery(), new LazyAbort());
      const full = new SourcedDelivery({ ...delivery(), sessionId: 's', logLevel: 'info', notify }, new LazyAbort());
      expect(full.sessionId).toBe('s');
      expect(full.logLevel).toBe('info');
      expect(full.notify).toBe(notify);
      expect(Object.keys(plain)).toEqual(Object.keys(full));
    });

    it('is copied by deliveryWith with the same source, so the copy still aborts with it', () => {
      const source = new LazyAbort();
      const context = new SourcedDelivery(delivery(), source);
      const beginTask = (): never => undefined as never;
      const copy = deliveryWith(context, { beginTask });
      expect(copy).not.toBe(context);
      expect(copy.beginTask).toBe(beginTask);
      expect(context.beginTask).toBeUndefined();
      expect(abortSourceOf(copy)).toBe(source);
      source.abort(new Error('stop'));
      expect(copy.signal?.aborted).toBe(true);
    });

    it('copies a plain context by spreading it, with its own signal', () => {
      const controller = new AbortController();
      const copy = deliveryWith({ ...delivery(), signal: controller.signal }, { sessionId: 's' });
      expect(copy.signal).toBe(controller.signal);
      expect(copy.sessionId).toBe('s');
      expect(abortSourceOf(copy)).toBeUndefined();
    });

    it('finds no source on a context without one', () => {
      expect(abortSourceOf(delivery())).toBeUndefined();
    });
  });
});
