import { StdioDeadline, StdioDeadlineExceeded } from './stdio-deadline';

const NOW = 1_800_000_000_000;

function exceeded(run: () => unknown): StdioDeadlineExceeded {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(StdioDeadlineExceeded);
    return error as StdioDeadlineExceeded;
  }
  throw new Error('expected StdioDeadlineExceeded');
}

describe('StdioDeadline', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: NOW });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  describe('at', () => {
    it('is timeoutMs from now without a caller deadline', () => {
      expect(new StdioDeadline(5000).at).toBe(NOW + 5000);
    });

    it('is the caller deadline when it comes first, and the own budget when it does not', () => {
      expect(new StdioDeadline(5000, undefined, NOW + 1000).at).toBe(NOW + 1000);
      expect(new StdioDeadline(5000, undefined, NOW + 9000).at).toBe(NOW + 5000);
    });

    it('ignores a caller deadline that is not a finite number', () => {
      expect(new StdioDeadline(5000, undefined, Number.NaN).at).toBe(NOW + 5000);
      expect(new StdioDeadline(5000, undefined, Number.NEGATIVE_INFINITY).at).toBe(NOW + 5000);
      expect(new StdioDeadline(5000, undefined, '1' as unknown as number).at).toBe(NOW + 5000);
    });
  });

  describe('check', () => {
    it('passes until the last millisecond before the deadline, and throws at it', () => {
      const deadline = new StdioDeadline(100);
      jest.setSystemTime(NOW + 99);
      expect(() => deadline.check()).not.toThrow();
      jest.setSystemTime(NOW + 100);
      expect(exceeded(() => deadline.check()).aborted).toBe(false);
    });

    it('throws an aborted error once the signal aborted, even with time left', () => {
      const controller = new AbortController();
      const deadline = new StdioDeadline(100, controller.signal);
      expect(deadline.aborted).toBe(false);
      expect(() => deadline.check()).not.toThrow();
      controller.abort();
      expect(deadline.aborted).toBe(true);
      const error = exceeded(() => deadline.check());
      expect(error.aborted).toBe(true);
      expect(error.message).toBe('aborted');
      expect(error.name).toBe('StdioDeadlineExceeded');
    });

    it('says the deadline passed when it did and there is no abort', () => {
      const deadline = new StdioDeadline(0);
      const error = exceeded(() => deadline.check());
      expect(error.message).toBe('deadline passed');
      expect(new StdioDeadline(0).aborted).toBe(false);
    });
  });

  describe('race', () => {
    it('settles with the promise when it comes first, and stops its timer', async () => {
      const deadline = new StdioDeadline(100);
      await expect(deadline.race(Promise.resolve('ok'))).resolves.toBe('ok');
      expect(jest.getTimerCount()).toBe(0);
    });

    it('rejects with the promise error when it comes first, and stops its timer', async () => {
      const boom = new Error('boom');
      await expect(new StdioDeadline(100).race(Promise.reject(boom))).rejects.toBe(boom);
      expect(jest.getTimerCount()).toBe(0);
    });

    it('rejects with a deadline error once the remaining time is over, not before', async () => {
      const deadline = new StdioDeadline(100);
      jest.setSystemTime(NOW + 40);
      let outcome: unknown;
      deadline.race(new Promise(() => undefined)).catch((error: unknown) => (outcome = error));
      await jest.advanceTimersByTimeAsync(59);
      expect(outcome).toBeUndefined();
      await jest.advanceTimersByTimeAsync(1);
      expect(outcome).toBeInstanceOf(StdioDeadlineExceeded);
      expect((outcome as StdioDeadlineExceeded).aborted).toBe(false);
    });

    it('rejects at once when the deadline already passed', async () => {
      const deadline = new StdioDeadline(10);
      jest.setSystemTime(NOW + 50);
      let outcome: unknown;
      deadline.race(new Promise(() => undefined)).catch((error: unknown) => (outcome = error));
      await jest.advanceTimersByTimeAsync(0);
      expect(outcome).toBeInstanceOf(StdioDeadlineExceeded);
    });

    it('rejects as aborted when the signal aborts during the wait, and stops listening', async () => {
      const controller = new AbortController();
      const remove = jest.spyOn(controller.signal, 'removeEventListener');
      const deadline = new StdioDeadline(1000, controller.signal);
      const raced = deadline.race(new Promise(() => undefined));
      controller.abort();
      const error = await raced.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StdioDeadlineExceeded);
      expect((error as StdioDeadlineExceeded).aborted).toBe(true);
      expect(remove).toHaveBeenCalledWith('abort', expect.any(Function));
      expect(jest.getTimerCount()).toBe(0);
    });

    it('rejects as aborted at once when the signal had already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      const error = await new StdioDeadline(1000, controller.signal)
        .race(Promise.resolve('late'))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StdioDeadlineExceeded);
      expect((error as StdioDeadlineExceeded).aborted).toBe(true);
    });

    it('stops listening to the signal once the promise settled', async () => {
      const controller = new AbortController();
      const remove = jest.spyOn(controller.signal, 'removeEventListener');
      await new StdioDeadline(1000, controller.signal).race(Promise.resolve(1));
      expect(remove).toHaveBeenCalledTimes(1);
      await new StdioDeadline(1000, controller.signal).race(Promise.reject(new Error('x'))).catch(() => undefined);
      expect(remove).toHaveBeenCalledTimes(2);
    });

    it('stops listening to the signal when the deadline passes', async () => {
      const controller = new AbortController();
      const remove = jest.spyOn(controller.signal, 'removeEventListener');
      const raced = new StdioDeadline(10, controller.signal)
        .race(new Promise(() => undefined))
        .catch((e: unknown) => e);
      await jest.advanceTimersByTimeAsync(10);
      expect(await raced).toBeInstanceOf(StdioDeadlineExceeded);
      expect(remove).toHaveBeenCalledWith('abort', expect.any(Function));
    });
  });
});
