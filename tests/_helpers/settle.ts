/** Letting promise callbacks run, for the tests on a fake clock. */

/**
 * Lets pending promise callbacks run: awaits `turns` microtask turns, so
 * work chained that many `then`s deep has happened. No timer runs meanwhile.
 */
export async function settle(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
}
