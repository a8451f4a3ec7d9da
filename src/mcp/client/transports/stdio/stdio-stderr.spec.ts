import { StdioStderrTail } from './stdio-stderr';

describe('StdioStderrTail', () => {
  it('keeps everything below the limit', () => {
    const tail = new StdioStderrTail(16);
    tail.push(Buffer.from('hello '));
    tail.push(Buffer.from('world'));
    expect(tail.text()).toBe('hello world');
    expect(tail.totalBytes).toBe(11);
  });

  it('keeps only the last limit bytes of a long stream', () => {
    const tail = new StdioStderrTail(8);
    for (let i = 0; i < 1000; i++) tail.push(Buffer.from('0123456789'));
    tail.push(Buffer.from('x'.repeat(100) + 'THE-END'));
    expect(tail.text()).toBe('xTHE-END');
    expect(tail.totalBytes).toBe(10_107);
  });

  it('drops a character cut in half at the start instead of showing garbage', () => {
    const tail = new StdioStderrTail(4);
    tail.push(Buffer.from('aé✓'));
    expect(tail.text()).toBe('✓');
  });

  it('returns what was written after a mark', () => {
    const tail = new StdioStderrTail(64);
    tail.push(Buffer.from('start-up\n'));
    const mark = tail.totalBytes;
    tail.push(Buffer.from('during call\n'));
    expect(tail.text(mark)).toBe('during call\n');
    expect(tail.text(tail.totalBytes)).toBe('');
  });

  it('holds nothing with a zero limit but still counts', () => {
    const tail = new StdioStderrTail(0);
    tail.push(Buffer.from('abc'));
    expect(tail.text()).toBe('');
    expect(tail.totalBytes).toBe(3);
  });
});
