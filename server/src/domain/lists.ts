// Lists of an account's avatars and videos (ND-LISTS): newest first, a page at a time.
// The cursor is the place of the last record shown (its creation time and ID), so a page
// starts exactly after it: records created meanwhile sort before it and are not met
// again, and ties of time are broken by ID, so none is skipped or repeated.
import type { components } from '../../../generated/openapi.ts';
import type { DomainDeps } from './deps.ts';
import { DomainError, type FieldError } from './errors.ts';
import type { Job, JobKind, JobStatus } from './model.ts';
import type { JobListQuery } from './ports.ts';
import { toAvatarResource, toAvatarVideoResource } from './serialize.ts';

export type AvatarList = components['schemas']['AvatarList'];
export type AvatarVideoList = components['schemas']['AvatarVideoList'];

export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;
const STATUSES: readonly JobStatus[] = ['queued', 'processing', 'ready', 'failed'];

/** The query string as Koa hands it: a name given twice is an array. */
export type Query = Record<string, string | string[] | undefined>;

export function listAvatars(deps: DomainDeps, accountId: string, query: Query): Promise<AvatarList> {
  return page(deps, accountId, 'avatar', query, (job) => toAvatarResource(job, deps.publicBaseUrl));
}

export function listAvatarVideos(deps: DomainDeps, accountId: string, query: Query): Promise<AvatarVideoList> {
  return page(deps, accountId, 'avatar_video', query, (job) => toAvatarVideoResource(job, deps.publicBaseUrl));
}

async function page<T>(deps: DomainDeps, accountId: string, kind: JobKind, query: Query, serialize: (job: Job) => T) {
  const parsed = readListQuery<JobFilters>(query, kind === 'avatar_video' ? [STATUS_FILTER, AVATAR_FILTER] : [STATUS_FILTER]);
  // One more than the page: whether it exists is has_more.
  const found = await deps.store.jobs.listJobs({ accountId, kind, ...parsed, limit: parsed.limit + 1 });
  const jobs = found.slice(0, parsed.limit);
  const hasMore = found.length > parsed.limit;
  return { object: 'list' as const, data: jobs.map(serialize), has_more: hasMore, next_cursor: hasMore ? cursorAt(jobs.at(-1)!) : null };
}

type JobFilters = Pick<JobListQuery, 'status' | 'avatarId'>;

const STATUS_FILTER: ListFilter<JobFilters> = {
  param: 'status',
  read(value, into) {
    if (!(STATUSES as readonly string[]).includes(value)) return { field: 'status', rule: 'enum', message: `must be one of ${STATUSES.join(', ')}` };
    into.status = value as JobStatus;
    return undefined;
  },
};

const AVATAR_FILTER: ListFilter<JobFilters> = {
  param: 'avatar_id',
  read(value, into) {
    if (value.length < 1 || value.length > 64) return { field: 'avatar_id', rule: 'maxLength', message: 'must be 1 to 64 characters' };
    into.avatarId = value;
    return undefined;
  },
};

/** Where a page starts: after the record at this place in the newest-first order. */
export interface Place {
  createdAt: number;
  id: string;
}

/** What every list reads: the page size and where it starts. */
export interface Paging {
  limit: number;
  after?: Place;
}

/** One filter of a list: its query parameter, and how a value goes into the query (or the rule it breaks). */
export interface ListFilter<F> {
  param: string;
  read(value: string, into: F): FieldError | undefined;
}

/**
 * Reads a list's query: `limit` and `cursor`, which every list takes, then its own
 * filters. A parameter given twice or breaking its rule is named in one 422 with the others.
 */
export function readListQuery<F extends object>(query: Query, filters: readonly ListFilter<F>[]): Paging & F {
  const errors: FieldError[] = [];
  const one = (name: string): string | undefined => {
    const value = query[name];
    if (Array.isArray(value)) {
      errors.push({ field: name, rule: 'single', message: 'must be given once' });
      return undefined;
    }
    return value;
  };
  const out = { limit: DEFAULT_PAGE } as Paging & F;

  const limit = one('limit');
  if (limit !== undefined) {
    const n = /^\d{1,4}$/.test(limit) ? Number(limit) : NaN;
    if (Number.isNaN(n)) errors.push({ field: 'limit', rule: 'type', message: 'must be a whole number' });
    else if (n < 1) errors.push({ field: 'limit', rule: 'minimum', message: 'must be at least 1' });
    else if (n > MAX_PAGE) errors.push({ field: 'limit', rule: 'maximum', message: `must be at most ${MAX_PAGE}` });
    else out.limit = n;
  }
  const cursor = one('cursor');
  if (cursor !== undefined) {
    const after = placeOf(cursor);
    if (after) out.after = after;
    else errors.push({ field: 'cursor', rule: 'format', message: 'must be a next_cursor this service gave' });
  }
  for (const filter of filters) {
    const value = one(filter.param);
    const broken = value === undefined ? undefined : filter.read(value, out);
    if (broken) errors.push(broken);
  }
  if (errors.length > 0) throw new DomainError('validation_failed', `The request breaks ${errors.length} rule${errors.length === 1 ? '' : 's'}; see errors.`, errors);
  return out;
}

/** The cursor of the page after a record: its place, opaque to clients. */
export function cursorAt(place: Place): string {
  return Buffer.from(JSON.stringify({ t: place.createdAt, i: place.id })).toString('base64url');
}

function placeOf(cursor: string): Place | undefined {
  if (cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  try {
    const place = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { t?: unknown; i?: unknown };
    return Number.isSafeInteger(place.t) && typeof place.i === 'string' && place.i.length <= 64 ? { createdAt: place.t as number, id: place.i } : undefined;
  } catch {
    return undefined;
  }
}
