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
  const parsed = parse(kind, query);
  // One more than the page: whether it exists is has_more.
  const found = await deps.store.jobs.listJobs({ accountId, kind, ...parsed, limit: parsed.limit + 1 });
  const jobs = found.slice(0, parsed.limit);
  const hasMore = found.length > parsed.limit;
  return { object: 'list' as const, data: jobs.map(serialize), has_more: hasMore, next_cursor: hasMore ? cursorOf(jobs.at(-1)!) : null };
}

function parse(kind: JobKind, query: Query): Omit<JobListQuery, 'accountId' | 'kind'> {
  const errors: FieldError[] = [];
  const one = (name: string): string | undefined => {
    const value = query[name];
    if (Array.isArray(value)) {
      errors.push({ field: name, rule: 'single', message: 'must be given once' });
      return undefined;
    }
    return value;
  };
  const out: Omit<JobListQuery, 'accountId' | 'kind'> = { limit: DEFAULT_PAGE };

  const limit = one('limit');
  if (limit !== undefined) {
    const n = /^\d{1,4}$/.test(limit) ? Number(limit) : NaN;
    if (Number.isNaN(n)) errors.push({ field: 'limit', rule: 'type', message: 'must be a whole number' });
    else if (n < 1) errors.push({ field: 'limit', rule: 'minimum', message: 'must be at least 1' });
    else if (n > MAX_PAGE) errors.push({ field: 'limit', rule: 'maximum', message: `must be at most ${MAX_PAGE}` });
    else out.limit = n;
  }
  const status = one('status');
  if (status !== undefined) {
    if ((STATUSES as readonly string[]).includes(status)) out.status = status as JobStatus;
    else errors.push({ field: 'status', rule: 'enum', message: `must be one of ${STATUSES.join(', ')}` });
  }
  const cursor = one('cursor');
  if (cursor !== undefined) {
    const after = placeOf(cursor);
    if (after) out.after = after;
    else errors.push({ field: 'cursor', rule: 'format', message: 'must be a next_cursor this service gave' });
  }
  if (kind === 'avatar_video') {
    const avatarId = one('avatar_id');
    if (avatarId !== undefined) {
      if (avatarId.length >= 1 && avatarId.length <= 64) out.avatarId = avatarId;
      else errors.push({ field: 'avatar_id', rule: 'maxLength', message: 'must be 1 to 64 characters' });
    }
  }
  if (errors.length > 0) throw new DomainError('validation_failed', `The request breaks ${errors.length} rule${errors.length === 1 ? '' : 's'}; see errors.`, errors);
  return out;
}

function cursorOf(job: Job): string {
  return Buffer.from(JSON.stringify({ t: job.createdAt, i: job.id })).toString('base64url');
}

function placeOf(cursor: string): { createdAt: number; id: string } | undefined {
  if (cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  try {
    const place = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { t?: unknown; i?: unknown };
    return Number.isSafeInteger(place.t) && typeof place.i === 'string' && place.i.length <= 64 ? { createdAt: place.t as number, id: place.i } : undefined;
  } catch {
    return undefined;
  }
}
