// A record in a terminal state never changes (ST-TERMINAL: no write touches a ready or
// failed job again), so its answer can be kept once it is made: a read of a finished
// record then costs no store round trip and no serialization, in every process alike,
// since there is nothing another process could change. A record that may still change
// is never kept and is read from the store each time.
import { LRUCache } from 'lru-cache';
import type { Job, JobKind } from './model.ts';

/** A finished record's answer, with what decides who may read it. */
export interface FinishedRecord {
  accountId: string;
  kind: JobKind;
  /** The record as the GET answer's JSON text. */
  json: string;
}

export interface FinishedRecords {
  get(id: string): FinishedRecord | undefined;
  /** Keeps the answer of `job` if it is finished; a job still under way is left out. */
  keep(job: Job, json: string): void;
}

export interface FinishedRecordsOptions {
  /** Characters of JSON kept at most, records' overhead included (default 4 MB worth); 0 keeps none. */
  maxChars?: number;
}

/** What a kept record costs beyond its JSON text: the entry, the IDs, the map's slot. */
const ENTRY_OVERHEAD_CHARS = 200;

export function createFinishedRecords(options: FinishedRecordsOptions = {}): FinishedRecords {
  if (options.maxChars === 0) return { get: () => undefined, keep: () => undefined };
  const kept = new LRUCache<string, FinishedRecord>({
    maxSize: options.maxChars ?? 4_000_000,
    sizeCalculation: (record) => record.json.length + ENTRY_OVERHEAD_CHARS,
  });
  return {
    get: (id) => kept.get(id),
    keep(job, json) {
      if (job.status === 'ready' || job.status === 'failed') kept.set(job.id, { accountId: job.accountId, kind: job.kind, json });
    },
  };
}
