// Polls until a reply is the one a test waits for: for state another process or timer
// moves (a delivery, a worker's write), where no event of the test's own can be awaited.

/** `probe` again every 20 ms until `accept` takes its value; throws with the last value after `timeoutMs`, a bound that only ends a failing wait. */
export async function eventually<T>(probe: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
