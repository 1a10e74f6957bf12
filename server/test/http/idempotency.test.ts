// Idempotency keys on the creates (ND-IDEMPOTENCY), on the store the suite runs on: a
// retry with the same key and body answers the first answer and creates and charges
// nothing, whatever the timing; another body is refused; a request that created nothing
// leaves the key free; keys belong to the account and expire after 24 hours.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENEROUS_PLAN, promptAvatar, startTestService, type TestService } from '../support/harness.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.dispose());

const create = (key: string, idempotencyKey: string | undefined, json: unknown, path = '/v1/avatars') =>
  svc.request('POST', path, { key, json, headers: idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey } });

/** Credits reserved or used, from one read: the job may move from one to the other between two. */
async function spent(key: string): Promise<number> {
  const { credits } = (await svc.request('GET', '/v1/me', { key })).body;
  return credits.reserved + credits.used;
}

async function reserved(key: string): Promise<number> {
  return (await svc.request('GET', '/v1/me', { key })).body.credits.reserved;
}

async function readyAvatar(key: string): Promise<string> {
  const created = await create(key, undefined, promptAvatar());
  return (await svc.waitTerminal(`/v1/avatars/${created.body.id}`, key)).id;
}

describe('a create sent again with its idempotency key', () => {
  it('when the body is the same, then it answers the first 202 again, marked as a replay, and charges once', async () => {
    const { api_key: key } = await svc.account({ credits: 100, plan: GENEROUS_PLAN });

    const first = await create(key, 'order-1', promptAvatar());
    const again = await create(key, 'order-1', { prompt: promptAvatar().prompt, name: promptAvatar().name, type: 'prompt' });

    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(await spent(key)).toBe(10);
  });

  it('when the body differs, or the key was used on the other create, then 409 idempotency_key_reused names the header and nothing is created', async () => {
    const { api_key: key } = await svc.account({ credits: 100, plan: GENEROUS_PLAN });
    const avatarId = await readyAvatar(key);
    const video = { avatar_id: avatarId, script: 'Hello there.' };
    await create(key, 'job-7', video, '/v1/avatar-videos');
    const before = await svc.activeJobs();

    const otherBody = await create(key, 'job-7', { ...video, script: 'Something else.' }, '/v1/avatar-videos');
    const otherOperation = await create(key, 'job-7', promptAvatar());

    for (const refused of [otherBody, otherOperation]) {
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe('idempotency_key_reused');
      expect(refused.body.errors).toEqual([expect.objectContaining({ field: 'Idempotency-Key', rule: 'same_request' })]);
    }
    expect(await svc.activeJobs()).toBeLessThanOrEqual(before);
  });

  it('when the first request created nothing, then the key is still free', async () => {
    const { api_key: key } = await svc.account({ credits: 100, plan: GENEROUS_PLAN });
    const avatarId = await readyAvatar(key);

    const refused = await create(key, 'retry-me', { avatar_id: 'av_000000000000000000000000', script: 'Hi.' }, '/v1/avatar-videos');
    const created = await create(key, 'retry-me', { avatar_id: avatarId, script: 'Hi.' }, '/v1/avatar-videos');

    expect(refused.status).toBe(404);
    expect(created.status).toBe(202);
    expect(created.headers.get('idempotent-replayed')).toBeNull();
  });

  it('when another account sends the same key, then it is another request', async () => {
    const a = (await svc.account({ credits: 100, plan: GENEROUS_PLAN })).api_key;
    const b = (await svc.account({ credits: 100, plan: GENEROUS_PLAN })).api_key;

    const first = await create(a, 'shared-key', promptAvatar());
    const second = await create(b, 'shared-key', promptAvatar());

    expect(second.status).toBe(202);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.id).not.toBe(first.body.id);
  });

  it('when 24 hours of the account time have passed, then the key creates again', async () => {
    const { api_key: key } = await svc.account({ credits: 100, plan: GENEROUS_PLAN });
    const first = await create(key, 'daily', promptAvatar());

    await svc.request('POST', '/v1/test_helpers/clock/advance', { key, json: { seconds: 24 * 3600 } });
    const after = await create(key, 'daily', promptAvatar());

    expect(after.status).toBe(202);
    expect(after.headers.get('idempotent-replayed')).toBeNull();
    expect(after.body.id).not.toBe(first.body.id);
  });

  it('when the key is not 1 to 255 visible ASCII characters, then 422 names the header', async () => {
    const { api_key: key } = await svc.account({ credits: 100, plan: GENEROUS_PLAN });

    for (const [bad, rule] of [['x'.repeat(256), 'maxLength'], ['has space', 'pattern'], ['tab\there', 'pattern'], ['é-not-ascii', 'pattern']]) {
      const refused = await create(key, bad!, promptAvatar());
      expect(refused.status, bad).toBe(422);
      expect(refused.body.detail, bad).toBe('The Idempotency-Key header breaks 1 rule; see errors.');
      expect(refused.body.errors, bad).toEqual([{ field: 'Idempotency-Key', rule, message: 'must be 1 to 255 visible ASCII characters, the same on every retry of one request' }]);
    }
    expect(await reserved(key)).toBe(0);
  });
});

describe('concurrent and interrupted creates with one key', () => {
  it('when 50 identical creates with one key arrive at once, then one job is created and charged once, and all answer it', async () => {
    const { api_key: key } = await svc.account({ credits: 1000, plan: GENEROUS_PLAN });

    const answers = await Promise.all(Array.from({ length: 50 }, () => create(key, 'burst', promptAvatar())));

    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(202));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    const { credits } = (await svc.request('GET', '/v1/me', { key })).body;
    expect(credits.reserved + credits.used).toBe(10);
  });

  it('when the answer is lost after the job was created and the service restarts, then the retry answers the job it created', async () => {
    const crashing = await startTestService();
    const { api_key: key } = await crashing.account({ credits: 100, plan: GENEROUS_PLAN });
    crashing.domain.onJobQueued = () => {
      throw new Error('the process died after the commit, before answering');
    };
    const lost = await crashing.request('POST', '/v1/avatars', { key, json: promptAvatar(), headers: { 'Idempotency-Key': 'lost-answer' } });
    await crashing.stop();

    const restarted = await startTestService({ storeEnv: crashing.storeEnv });
    try {
      const retry = await restarted.request('POST', '/v1/avatars', { key, json: promptAvatar(), headers: { 'Idempotency-Key': 'lost-answer' } });

      expect(lost.status).toBe(500);
      expect(retry.status).toBe(202);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      const { credits } = (await restarted.request('GET', '/v1/me', { key })).body;
      expect(credits.reserved + credits.used).toBe(10);
      expect((await restarted.request('GET', `/v1/avatars/${retry.body.id}`, { key })).status).toBe(200);
    } finally {
      await restarted.dispose();
      await crashing.storeEnv.drop();
    }
  });
});
