import type { BenchDatabase, EventCount } from './bench.database';

/** What autocannon did against one target of ours, over every run including warm-ups. */
export interface RequestTally {
  /** Responses received. */
  answered: number;
  /** Requests written, including the ones in flight when a run stopped. */
  sent: number;
}

async function settledCounts(db: BenchDatabase, deadlineMs: number): Promise<EventCount[]> {
  // Requests cut off at the end of a run may still be committing: wait until the count holds still.
  const deadline = Date.now() + deadlineMs;
  let last = await db.eventCounts();
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const next = await db.eventCounts();
    const total = (counts: EventCount[]) => counts.reduce((sum, c) => sum + c.rows, 0);
    if (total(next) === total(last)) return next;
    last = next;
  }
  return last;
}

/**
 * Compares the `mcp_events` rows of one target's database with the requests autocannon completed
 * against it: every answered request must have its row (a response never leaves before its row
 * is committed; with `AUDIT_COMMIT=async` the commit just does not wait for the WAL flush), and
 * there can be no more rows than requests sent. `setupRows` are the rows of opening the session
 * (the handshake) or of the stateless probe call.
 */
export async function checkEventRows(
  db: BenchDatabase,
  tally: RequestTally,
  label: string,
  setupRows: number,
  /** What sent the requests, as the report names it. */
  loadGenerator = 'autocannon',
): Promise<{ lines: string[]; ok: boolean }> {
  const counts = await settledCounts(db, 15_000);
  const rows = counts.reduce((sum, c) => sum + c.rows, 0);
  const low = tally.answered + setupRows;
  const high = tally.sent + setupRows;
  const ok = rows >= low && rows <= high;
  const verdict =
    rows < low
      ? `MISSING ${low - rows} rows for answered requests`
      : rows > high
        ? `${rows - high} rows more than requests sent`
        : 'OK, every answered request is logged';
  const groups = counts.map((c) => `${c.kind} ${c.method ?? '-'} ${c.status ?? '-'}: ${c.rows}`).join(', ');
  return {
    ok,
    lines: [
      `events ${label}: mcp_events rows ${rows} vs ${loadGenerator} completed ${tally.answered} + ${setupRows} setup = ${low} ` +
        `(sent ${tally.sent}; requests cut off at the end of a run may add up to ${tally.sent - tally.answered}) -> ${verdict}`,
      `events ${label} by kind/method/status: ${groups}`,
    ],
  };
}
