// Fair webhook delivery across receivers. The sender's slots are shared by every
// account, so a receiver that hangs or keeps failing must not hold more than its share:
// each destination (a host and port) gets a few attempts in flight at most, and one that
// has been down several times in a row gets one at a time until it answers again.
// Every attempt of the retry schedule is still made for real (none is skipped or failed
// without trying), so an event's schedule is the contract's; only a failing
// destination's own backlog waits its turn.
import { canonicalName } from './addresses.ts';

export interface DeliveryFairness {
  /** Attempts in flight to one destination at most while it answers. */
  perDestination: number;
  /** Attempts in a row that found the destination down, after which it gets one at a time. */
  circuitFailures: number;
}

/**
 * The destination a webhook URL is sent to: its host and effective port, lower-cased
 * and without the trailing dots of an absolute name. `http://h` and `https://h:80` are
 * the same destination: the same listening socket answers both, so they share its
 * share of the sender; `h..` is `h`, so dots cannot buy a receiver more shares.
 */
export function destinationOf(raw: string): string {
  try {
    const url = new URL(raw);
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    return `${canonicalName(url.hostname)}:${port}`;
  } catch {
    return raw; // a URL that does not parse fails its attempt; it is its own destination
  }
}

/** What one attempt says of its destination: whether it serves, fails, or was never asked. */
export type DestinationHealth = 'up' | 'down' | 'unknown';

/**
 * A destination is down when it did not answer (no connection, a reset, a timeout, a
 * name that does not resolve) or answered as a server that cannot take the request
 * (5xx, 408, 429). Any other answer shows it up: a 2xx, and also a 404 or 410 for one
 * tenant's stale URL on a host that others share, which must not slow the others. An
 * attempt never made (the account is gone, the URL is refused) says nothing of it.
 */
export function destinationHealth(attempted: boolean, status: number | null): DestinationHealth {
  if (!attempted) return 'unknown';
  if (status === null || status >= 500 || status === 408 || status === 429) return 'down';
  return 'up';
}

/** Attempts a destination may have in flight, given its failures in a row. */
export function destinationLimit(failuresInARow: number, fairness: DeliveryFairness): number {
  return failuresInARow >= fairness.circuitFailures ? 1 : fairness.perDestination;
}

/**
 * How a store claims fairly without reading its whole backlog:
 * 1. When no destination is full, it reads the oldest due events (HEAD_SCAN per slot
 *    asked for) and picks from them; that is enough unless one destination's backlog
 *    fills the read.
 * 2. Otherwise, or when the read was filled and the claim was not, it looks destination
 *    by destination (each one's oldest due events, by an index on destination and due
 *    time), leaving out the full ones, and picks the oldest of those.
 * Either way a destination's backlog, however long, costs the claim no more than its
 * room, and no destination waits behind another's.
 */
export const HEAD_SCAN = 4;

/** Whether the oldest due events read in one scan (step 1) fell short: the claim then goes on to step 2. */
export function headScanFellShort(picked: number, limit: number, read: number, asked: number): boolean {
  return picked < limit && read >= asked;
}

/** What the store knows of the destinations at claim time. */
export interface DestinationLoad {
  /** Attempts in flight (events leased and not yet settled), by destination. */
  inFlight: ReadonlyMap<string, number>;
  /** Failures in a row, for the destinations that have some. */
  failures: ReadonlyMap<string, number>;
}

function room(destination: string, load: DestinationLoad, fairness: DeliveryFairness): number {
  return destinationLimit(load.failures.get(destination) ?? 0, fairness) - (load.inFlight.get(destination) ?? 0);
}

/** Destinations that may not take another attempt now: their due events are passed over. */
export function fullDestinations(load: DestinationLoad, fairness: DeliveryFairness): string[] {
  return [...load.inFlight.keys()].filter((d) => room(d, load, fairness) <= 0);
}

/**
 * Takes up to `limit` of `due` (oldest first) without putting any destination over its
 * limit: a destination with many due events takes its share and leaves the rest of the
 * slots to the others.
 */
export function pickFairly<T extends { destination: string }>(due: readonly T[], load: DestinationLoad, fairness: DeliveryFairness, limit: number): T[] {
  const taken = new Map<string, number>();
  const picked: T[] = [];
  for (const event of due) {
    if (picked.length >= limit) break;
    const already = taken.get(event.destination) ?? 0;
    if (already >= room(event.destination, load, fairness)) continue;
    taken.set(event.destination, already + 1);
    picked.push(event);
  }
  return picked;
}
