// Use cases of both job kinds: create (reserve credits and queue) and read.
import type { components } from '../../../generated/openapi.ts';
import { CREDIT_COST, periodBounds, periodOf } from './credits.ts';
import type { Caller, DomainDeps } from './deps.ts';
import { DomainError, notFound, validationFailed } from './errors.ts';
import { claimFor, findReplay, idempotentCreate, replayOf, type IdempotentCreate } from './idempotency.ts';
import { isJobId, newAvatarId, newVideoId } from './ids.ts';
import type { AvatarInput, Job, JobKind, VideoInput } from './model.ts';
import { jsonText, toAvatarResource, toAvatarVideoResource, type AvatarResource, type AvatarVideoResource, type JsonText } from './serialize.ts';
import { accountNow } from './sandboxClock.ts';
import { checkWebhookUrl } from './webhookUrl.ts';

type AvatarCreateRequest = components['schemas']['AvatarCreateRequest'];
type AvatarVideoCreateRequest = components['schemas']['AvatarVideoCreateRequest'];

/** A kind of record as its problems name it, in a 402's detail and a 404's alike. */
const RECORD_NAME: Record<JobKind, string> = { avatar: 'avatar', avatar_video: 'avatar video' };

function checkWebhook(deps: DomainDeps, url: string | undefined): void {
  if (url === undefined) return;
  const problem = checkWebhookUrl(url, deps.mode);
  if (problem) throw validationFailed([problem]);
}

/** What a create answers: the record, and whether it is the replay of an earlier request with the same idempotency key. */
export interface Created<T> {
  record: T;
  replayed: boolean;
}

/**
 * Creates the job and its reservation together, or throws 402 having created nothing
 * (CR-402-NO-JOB). With an idempotency key, the key is stored with the job; a key kept
 * already answers its first answer instead, creating nothing (ND-IDEMPOTENCY).
 */
async function queueJob<T>(
  deps: DomainDeps,
  caller: Caller,
  job: { kind: JobKind; id: string; input: AvatarInput | VideoInput; webhookUrl: string | undefined },
  serialize: (job: Job) => T,
  idempotency: IdempotentCreate | undefined,
): Promise<Created<T>> {
  const serviceNow = deps.clock.now();
  const now = serviceNow + caller.account.clockOffsetMs; // the account's time, as accountNow gives it
  const queued: Job = {
    id: job.id,
    kind: job.kind,
    accountId: caller.account.id,
    keyId: caller.key.id,
    sandbox: caller.key.mode === 'sandbox',
    status: 'queued',
    input: job.input,
    webhookUrl: job.webhookUrl ?? null,
    credits: CREDIT_COST[job.kind],
    period: periodOf(now),
    error: null,
    result: null,
    createdAt: now,
    updatedAt: now,
    completedAt: null,
    attempts: 0,
  };
  const record = serialize(queued);
  const outcome = await deps.store.jobs.createJobReservingCredits(queued, serviceNow, idempotency && claimFor(idempotency, record, now));
  if (!outcome.ok && 'kept' in outcome) return replayOf<T>(idempotency!, outcome.kept);
  if (!outcome.ok) {
    if (outcome.balance.held !== undefined) deps.onCreditsOutOfRange?.(caller.account.id, outcome.balance);
    const renews = new Date(periodBounds(outcome.balance.period).end).toISOString();
    throw new DomainError(
      'insufficient_credits',
      `This ${RECORD_NAME[job.kind]} costs ${queued.credits} credits and the account has ${outcome.balance.available} available until ${renews}.`,
      [],
      { credits_required: queued.credits, credits_available: outcome.balance.available },
    );
  }
  deps.onJobQueued?.();
  return { record, replayed: false };
}

export async function createAvatar(deps: DomainDeps, caller: Caller, body: AvatarCreateRequest, idempotencyKey?: string): Promise<Created<AvatarResource>> {
  const idempotency = idempotencyKey === undefined ? undefined : idempotentCreate(idempotencyKey, 'createAvatar', body);
  const replay = idempotency && (await findReplay<AvatarResource>(deps, caller.account.id, idempotency, accountNow(deps, caller.account)));
  if (replay) return replay;
  checkWebhook(deps, body.webhook_url);
  const input: AvatarInput = { type: body.type, name: body.name };
  if (body.type === 'prompt') input.prompt = body.prompt!;
  if (body.type === 'photo') input.file = { type: 'url', url: body.file!.url };
  if (body.type === 'props') Object.assign(input, { ethnicity: body.ethnicity, sex: body.sex, age: body.age });
  return queueJob(deps, caller, { kind: 'avatar', id: newAvatarId(), input, webhookUrl: body.webhook_url }, (job) => toAvatarResource(job, deps.publicBaseUrl), idempotency);
}

export async function createAvatarVideo(deps: DomainDeps, caller: Caller, body: AvatarVideoCreateRequest, idempotencyKey?: string): Promise<Created<AvatarVideoResource>> {
  const idempotency = idempotencyKey === undefined ? undefined : idempotentCreate(idempotencyKey, 'createAvatarVideo', body);
  const replay = idempotency && (await findReplay<AvatarVideoResource>(deps, caller.account.id, idempotency, accountNow(deps, caller.account)));
  if (replay) return replay;
  checkWebhook(deps, body.webhook_url);
  const avatar = await findOwnJob(deps, caller.account.id, 'avatar', body.avatar_id);
  if (!avatar) throw notFound('avatar', body.avatar_id, 'avatar_id');
  // Terminal states never change, so a ready avatar stays ready: no race with this check.
  if (avatar.status !== 'ready') {
    throw new DomainError(
      'avatar_not_ready',
      `Avatar ${avatar.id} is ${avatar.status}; videos can be made only from a ready avatar.`,
      [{ field: 'avatar_id', rule: 'ready', message: `the avatar is ${avatar.status}, not ready` }],
      { avatar_status: avatar.status },
    );
  }
  const input: VideoInput = { avatar_id: avatar.id, script: body.script, aspect_ratio: body.aspect_ratio ?? '9:16' };
  return queueJob(deps, caller, { kind: 'avatar_video', id: newVideoId(), input, webhookUrl: body.webhook_url }, (job) => toAvatarVideoResource(job, deps.publicBaseUrl), idempotency);
}

/** A job of this kind owned by the account; any other account's job is "not found". */
async function findOwnJob(deps: DomainDeps, accountId: string, kind: JobKind, id: string): Promise<Job | null> {
  if (!isJobId(kind, id)) return null; // never sent to the store: it could not be there
  const job = await deps.store.jobs.getJob(id);
  return job && job.kind === kind && job.accountId === accountId ? job : null;
}

// The reads of a record depend on the caller's account by its ID alone, which never
// changes: admission may run them alongside the count (admission.ts).

export function getAvatar(deps: DomainDeps, accountId: string, id: string): Promise<JsonText<AvatarResource>> {
  return readOwnRecord(deps, accountId, 'avatar', id, (job) => toAvatarResource(job, deps.publicBaseUrl));
}

export function getAvatarVideo(deps: DomainDeps, accountId: string, id: string): Promise<JsonText<AvatarVideoResource>> {
  return readOwnRecord(deps, accountId, 'avatar_video', id, (job) => toAvatarVideoResource(job, deps.publicBaseUrl));
}

/** The account's record as its answer's JSON text: a finished one as kept, any other from the store. */
async function readOwnRecord<T>(deps: DomainDeps, accountId: string, kind: JobKind, id: string, serialize: (job: Job) => T): Promise<JsonText<T>> {
  const finished = deps.finished.get(id);
  if (finished) {
    if (finished.accountId !== accountId || finished.kind !== kind) throw notFound(RECORD_NAME[kind], id);
    return finished.json as JsonText<T>;
  }
  const job = await findOwnJob(deps, accountId, kind, id);
  if (!job) throw notFound(RECORD_NAME[kind], id);
  const json = jsonText(serialize(job));
  deps.finished.keep(job, json);
  return json;
}
