// Small, pure statistics for the benchmark: percentiles, medians, ratios and rounding.
// Kept apart from the harness so the test can check them on fixed numbers.

/**
 * The p-th percentile (0..100) of `values` by linear interpolation between closest
 * ranks (the method of NumPy's default and of most spreadsheets). NaN when empty.
 */
export function percentile(values: ArrayLike<number>, p: number): number {
  if (values.length === 0) return Number.NaN;
  if (p < 0 || p > 100) throw new RangeError(`percentile must be within 0..100 (got ${p})`);
  const sorted = Float64Array.from(values).sort();
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
}

export function median(values: ArrayLike<number>): number {
  return percentile(values, 50);
}

/**
 * The item whose `key` is the median of an odd number of items (of an even number, the
 * upper of the two middle ones): a measurement taken several times keeps all the figures
 * of one of its runs, not the median of each figure from different runs.
 */
export function medianBy<T>(items: readonly T[], key: (item: T) => number): T {
  if (items.length === 0) throw new RangeError('no items to take the median of');
  return [...items].sort((a, b) => key(a) - key(b))[Math.floor(items.length / 2)]!;
}

/** a / b, or null when either is missing or b is not a positive number. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined || b === null || b === undefined) return null;
  if (!Number.isFinite(a) || !Number.isFinite(b) || b <= 0) return null;
  return a / b;
}

/** Rounds to `digits` significant figures; keeps integers of that size whole. */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value) || value === 0) return value;
  const shift = digits - 1 - Math.floor(Math.log10(Math.abs(value)));
  // Multiply or divide by an exact power of ten, so 12,345 gives 12,300 and not 12,299.999...
  return shift >= 0 ? Math.round(value * 10 ** shift) / 10 ** shift : Math.round(value / 10 ** -shift) * 10 ** -shift;
}

/** Latency summary in milliseconds. */
export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function summarize(values: ArrayLike<number>): LatencySummary {
  let max = Number.NaN;
  for (let i = 0; i < values.length; i++) max = Number.isNaN(max) ? values[i]! : Math.max(max, values[i]!);
  return { count: values.length, p50: percentile(values, 50), p90: percentile(values, 90), p99: percentile(values, 99), max };
}

/** A growable buffer of numbers (latencies arrive by the hundred thousand). */
export class Samples {
  private data = new Float64Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }
  values(): Float64Array {
    return this.data.subarray(0, this.length);
  }
}

/** Bytes as decimal megabytes (the unit of the 200 MB memory target). */
export const MB = 1_000_000;

/** "12,345" */
export function formatInt(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** A number for a table: thousands separators above 1,000, 3 significant figures below. */
export function formatNumber(value: number | null | undefined, digits = 3): string {
  if (value === null || value === undefined || Number.isNaN(value)) return 'n/a';
  if (Math.abs(value) >= 1000) return formatInt(value);
  return String(round(value, digits));
}

export function formatRatio(value: number | null | undefined): string {
  return value === null || value === undefined ? 'n/a' : `${round(value, 3)}x`;
}

export function formatPercent(value: number | null | undefined): string {
  return value === null || value === undefined ? 'n/a' : `${round(value * 100, 3)}%`;
}

/** What `node --trace-gc` says about a process's JS heap (sizes in MB as V8 prints them). */
export interface GcTrace {
  scavenges: number;
  fullGcs: number;
  /** The most heap V8 had committed at any GC. */
  maxCommittedMB: number | null;
  /** Heap in use right after the last full GC: the live data. */
  liveAfterFullGcMB: number | null;
  /** Median heap freed by one scavenge: about what the young generation holds. */
  scavengeFreedMB: number | null;
}

const GC_LINE = /\b(Scavenge|Minor Mark-Sweep|Mark-Compact|Mark-Sweep)\b[^\d]*([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB/;

export function parseGcTrace(text: string): GcTrace {
  let scavenges = 0;
  let fullGcs = 0;
  let maxCommitted: number | null = null;
  let live: number | null = null;
  const freed: number[] = [];
  for (const line of text.split('\n')) {
    const m = GC_LINE.exec(line);
    if (!m) continue;
    const [before, committedBefore, after, committedAfter] = [m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number];
    maxCommitted = Math.max(maxCommitted ?? 0, committedBefore, committedAfter);
    if (m[1] === 'Scavenge' || m[1] === 'Minor Mark-Sweep') {
      scavenges++;
      freed.push(before - after);
    } else {
      fullGcs++;
      live = after;
    }
  }
  return { scavenges, fullGcs, maxCommittedMB: maxCommitted, liveAfterFullGcMB: live, scavengeFreedMB: freed.length ? median(freed) : null };
}
