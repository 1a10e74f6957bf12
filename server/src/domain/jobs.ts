// Use cases of both job kinds: create (reserve credits and queue) and read.
import type { components } from '../../../generated/openapi.ts';
import { CREDIT_COST, periodBounds, periodOf } from './credits.ts';
import type { Caller, DomainDeps } from './deps.ts';
import { DomainError, notFound, validationFailed } from './errors.ts';
import { isJobId, newAvatarId, newVideoId } from './ids.ts';
import type { AvatarInput, Job, JobKind, VideoInput } from './model.ts';
import { toAvatarResource, toAvatarVideoResource, type AvatarResource, type AvatarVideoResource } from './serialize.ts';
import { accountNow } from './sandboxClock.ts';
import { checkWebhookUrl } from './webhookUrl.ts';

type AvatarCreateRequest = components['schemas']['AvatarCreateRequest'];
type AvatarVideoCreateRequest = components['schemas']['AvatarVideoCreateRequest'];

const LABEL: Record<JobKind, string> = { avatar: 'avatar', avatar_video: 'avatar video' };

function checkWebhook(deps: DomainDeps, url: string | undefined): void {
  if (url === undefined) return;
  const problem = checkWebhookUrl(url, deps.mode);
  if (problem) throw validationFailed([problem]);
}

/** Creates the job and its reservation together, or throws 402 having created nothing (CR-402-NO-JOB). */
async function queueJob(deps: DomainDeps, caller: Caller, kind: JobKind, id: string, input: AvatarInput | VideoInput, webhookUrl: string | undefined): Promise<Job> {
  const now = accountNow(deps, caller.account);
  const job: Job = {
    id,
    kind,
    accountId: caller.account.id,
    keyId: caller.key.id,
    sandbox: caller.key.mode === 'sandbox',
    status: 'queued',
    input,
    webhookUrl: webhookUrl ?? null,
    credits: CREDIT_COST[kind],
    period: periodOf(now),
    error: null,
    result: null,
    createdAt: now,
    updatedAt: now,
    completedAt: null,
    attempts: 0,
  };
  const outcome = await deps.store.jobs.createJobReservingCredits(job);
  if (!outcome.ok) {
    const renews = new Date(periodBounds(outcome.balance.period).end).toISOString();
    throw new DomainError(
      'insufficient_credits',
      `This ${LABEL[kind]} costs ${job.credits} credits and the account has ${outcome.balance.available} available until ${renews}.`,
      [],
      { credits_required: job.credits, credits_available: outcome.balance.available },
    );
  }
  deps.onJobQueued?.();
  return outcome.job;
}

export async function createAvatar(deps: DomainDeps, caller: Caller, body: AvatarCreateRequest): Promise<AvatarResource> {
  checkWebhook(deps, body.webhook_url);
  const input: AvatarInput = { type: body.type, name: body.name };
  if (body.type === 'prompt') input.prompt = body.prompt!;
  if (body.type === 'photo') input.file = { type: 'url', url: body.file!.url };
  if (body.type === 'props') Object.assign(input, { ethnicity: body.ethnicity, sex: body.sex, age: body.age });
  const job = await queueJob(deps, caller, 'avatar', newAvatarId(), input, body.webhook_url);
  return toAvatarResource(job, deps.publicBaseUrl);
}

export async function createAvatarVideo(deps: DomainDeps, caller: Caller, body: AvatarVideoCreateRequest): Promise<AvatarVideoResource> {
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
  const job = await queueJob(deps, caller, 'avatar_video', newVideoId(), input, body.webhook_url);
  return toAvatarVideoResource(job, deps.publicBaseUrl);
}

/** A job of this kind owned by the account; any other account's job is "not found". */
async function findOwnJob(deps: DomainDeps, accountId: string, kind: JobKind, id: string): Promise<Job | null> {
  if (!isJobId(kind, id)) return null; // never sent to the store: it could not be there
  const job = await deps.store.jobs.getJob(id);
  return job && job.kind === kind && job.accountId === accountId ? job : null;
}

// The reads of a record depend on the caller's account by its ID alone, which never
// changes: admission may run them alongside the count (admission.ts).

export async function getAvatar(deps: DomainDeps, accountId: string, id: string): Promise<AvatarResource> {
  const job = await findOwnJob(deps, accountId, 'avatar', id);
  if (!job) throw notFound('avatar', id);
  return toAvatarResource(job, deps.publicBaseUrl);
}

export async function getAvatarVideo(deps: DomainDeps, accountId: string, id: string): Promise<AvatarVideoResource> {
  const job = await findOwnJob(deps, accountId, 'avatar_video', id);
  if (!job) throw notFound('avatar video', id);
  return toAvatarVideoResource(job, deps.publicBaseUrl);
}
