/**
 * Keeps the end of a child's stderr. The stream is always drained (a child blocked on a full
 * stderr pipe would hang), but only the last `limitBytes` are held, so a server that writes
 * megabytes without a newline costs no more memory than the limit.
 */
export class StdioStderrTail {
  private tail: Buffer = Buffer.alloc(0);
  private total = 0;

  constructor(private readonly limitBytes: number) {}

  /** Bytes seen in all, including those no longer held. */
  get totalBytes(): number {
    return this.total;
  }

  /** Takes one chunk read from the pipe. */
  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.limitBytes === 0) return;
    if (chunk.length >= this.limitBytes) {
      // Copy: a view would keep the whole (possibly large) pooled chunk alive.
      this.tail = Buffer.from(chunk.subarray(chunk.length - this.limitBytes));
      return;
    }
    const keep = Math.min(this.tail.length, this.limitBytes - chunk.length);
    this.tail = Buffer.concat([this.tail.subarray(this.tail.length - keep), chunk]);
  }

  /**
   * The held bytes written after `sinceTotal` (a past `totalBytes`) as UTF-8 text. When the start
   * was cut, a partial character at the cut is dropped rather than shown as a replacement.
   */
  text(sinceTotal = 0): string {
    const held = Math.min(this.tail.length, Math.max(0, this.total - sinceTotal));
    let start = this.tail.length - held;
    if (this.total - sinceTotal > held) {
      const limit = start + 3;
      while (start < this.tail.length && start < limit && (this.tail[start] & 0xc0) === 0x80) start++;
    }
    return this.tail.toString('utf8', start);
  }
}
