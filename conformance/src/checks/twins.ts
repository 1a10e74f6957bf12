// What the avatar check and the video check of one behaviour share. Each pair judges the same
// rule of two kinds of record, so each is one implementation here, given the kind's facts;
// the two check files keep their IDs, titles and clause lists and say only what differs.
// Written once, a rule tightened for one kind is tightened for both.
import type { ClauseId, DecisionId } from '../clauses.ts';
import type { CheckContext } from '../context.ts';
import { describe, expectProblem } from '../expect.ts';
import { fail, skip } from '../outcome.ts';
import { isJson, type Json, type TrackedJob } from '../world.ts';

/** What differs between the avatar and the video twin of a check. */
export interface RecordKind {
  noun: 'avatar' | 'video';
  /** The noun with its article, for messages. */
  one: 'an avatar' | 'a video';
  path: '/v1/avatars' | '/v1/avatar-videos';
  /** The record's schema in the contract. */
  schema: 'Avatar' | 'AvatarVideo';
  /** An ID of the record's form that no account was ever given. */
  unknownId: string;
  get: ClauseId;
  failedError: ClauseId;
  /** The contract decision listing the record's members. */
  fields: DecisionId;
  /** Where the sandbox failure marker goes, and the profile member that names the trigger. */
  trigger: { member: string; profile: string };
}

export const AVATAR: RecordKind = {
  noun: 'avatar',
  one: 'an avatar',
  path: '/v1/avatars',
  schema: 'Avatar',
  unknownId: 'av_000000000000000000000000',
  get: 'AV-GET',
  failedError: 'AV-FAILED-ERROR',
  fields: 'ND-AVATAR-FIELDS',
  trigger: { member: 'name', profile: 'failure.avatar' },
};

export const VIDEO: RecordKind = {
  noun: 'video',
  one: 'a video',
  path: '/v1/avatar-videos',
  schema: 'AvatarVideo',
  unknownId: 'vid_000000000000000000000000',
  get: 'VID-GET',
  failedError: 'VID-FAILED-ERROR',
  fields: 'ND-VIDEO-FIELDS',
  trigger: { member: 'script', profile: 'failure.video' },
};

/**
 * A record made to fail with the profile's trigger ends failed and carries an error object;
 * under the contract, the sandbox's own `{code: sandbox_forced_failure, message}`. Returns
 * the failed record for what the kind adds.
 */
export async function judgeFailedHasError(ctx: CheckContext, kind: RecordKind, job: TrackedJob): Promise<Json> {
  const record = await job.settled;
  if (job.ended !== 'failed') {
    const ended = String(ctx.shape.state(record));
    if (ctx.contract) {
      fail({ clause: 'ND-SANDBOX-FAILURE', message: `${kind.one} requested with the failure trigger ended ${ended}`, expected: 'status failed', received: `status ${ended}`, fix: `With a sandbox key, fail ${kind.noun}s whose ${kind.trigger.member} contains the marker.`, exchanges: [job.create] });
    }
    skip(`the failure trigger of the implementation profile did not make the ${kind.noun} fail (it ended ${ended}); correct ${kind.trigger.profile}`);
  }
  if (!isJson(record.error)) {
    fail({ clause: kind.failedError, message: `failed ${kind.noun} ${job.id} has no error object`, expected: 'an error object', received: `error: ${JSON.stringify(record.error)}`, fix: `Set error on every failed ${kind.noun}: say why it failed.` });
  }
  if (ctx.contract && (record.error.code !== 'sandbox_forced_failure' || typeof record.error.message !== 'string')) {
    fail({ clause: 'ND-SANDBOX-FAILURE', message: 'the forced failure does not say it was forced', expected: '{"code": "sandbox_forced_failure", "message": "…"}', received: JSON.stringify(record.error), fix: 'Use error.code sandbox_forced_failure for the sandbox trigger, with a message.' });
  }
  return record;
}

/**
 * GET of the record answers 200 with the record whose id is the one the create gave (in the
 * mock profile, any id: a mock answers its example); under the contract, every documented
 * member, and a 404 not_found for an ID never given.
 */
export async function judgeGetReturnsRecord(ctx: CheckContext, kind: RecordKind, id: string): Promise<void> {
  const exchange = await ctx.http.send({ key: 'main', method: 'GET', path: `${kind.path}/${id}`, note: `read ${kind.one}` });
  const fix = `Answer 200 with the ${kind.noun} record, including its id.`;
  if (exchange.status !== 200) fail({ clause: kind.get, message: `reading ${kind.one} of this account failed`, expected: '200', received: describe(exchange), fix, exchanges: [exchange] });
  const got = ctx.shape.recordId(exchange.json);
  if (!got || (ctx.profile !== 'mock' && got !== id)) {
    fail({ clause: kind.get, message: `the ${kind.noun} record does not carry the requested id`, expected: `"id": "${id}"`, received: got ? `"id": "${got}"` : 'no id', fix, exchanges: [exchange] });
  }
  if (!ctx.contract) return;
  const errors = ctx.validator.validateSchema(kind.schema, isJson(exchange.json) ? exchange.json : {});
  if (errors.length) fail({ clause: kind.fields, message: `the ${kind.noun} record lacks documented members`, expected: `the ${kind.schema} schema`, received: errors.join('; '), fix: `Return every member of the ${kind.schema} schema, null where it has no value yet.`, exchanges: [exchange] });
  const unknown = await ctx.http.send({ key: 'main', method: 'GET', path: `${kind.path}/${kind.unknownId}`, note: `${kind.one} that does not exist` });
  expectProblem(unknown, 404, 'not_found', 'ND-ERRORS', `reading ${kind.one} that does not exist`);
}
