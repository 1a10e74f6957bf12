// One access-log line per answered request, with what an operator needs and nothing a
// client would not want logged.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { startService, type Service } from '../../src/runtime.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';

const lines: Record<string, any>[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    done();
  },
});

let storeEnv: TestStoreEnv;
let svc: Service;
let key: string;
beforeAll(async () => {
  storeEnv = await createTestStoreEnv();
  svc = await startService(loadConfig({ PORT: '0', ...storeEnv.env, ENGINE_AVATAR_MS: '0' }), { log: pino({ level: 'info' }, sink) });
  key = (await createAccount(svc.store, systemClock, {})).api_key;
});
afterAll(async () => {
  await svc.stop();
  await storeEnv.drop();
});

const accessLines = () => lines.filter((l) => l.req && l.res);

describe('the access log', () => {
  it('has one line per request with method, path without its query, status, duration and the request ID, and no header', async () => {
    const answer = await fetch(`${svc.url}/v1/avatar-videos?avatar_id=secret-query`, { headers: { Authorization: `Bearer ${key}`, 'X-Request-Id': 'req_from_client' } });
    await fetch(`${svc.url}/v1/avatars/av_nope`, { headers: { Authorization: `Bearer ${key}` } });
    await answer.text();

    const [list, missing] = accessLines().slice(-2);
    expect(list).toMatchObject({ level: 30, requestId: 'req_from_client', req: { method: 'GET', path: '/v1/avatar-videos' }, res: { status: 200 }, msg: 'GET /v1/avatar-videos 200' });
    expect(list!.durationMs).toEqual(expect.any(Number));
    expect(missing).toMatchObject({ req: { path: '/v1/avatars/av_nope' }, res: { status: 404 } });
    expect(JSON.stringify(lines)).not.toContain(key);
    expect(JSON.stringify(lines)).not.toContain('secret-query');
  });

  it('never holds a key or a signing secret, wherever the client put it: the path (percent-encoded too), the query or a header', async () => {
    const other = (await createAccount(svc.store, systemClock, {})).api_key;
    const secret = 'whsec_aCwsFU2VXibt/0J5ufMfOFCMRx+obFBG==';
    const from = lines.length;

    const answers = await Promise.all([
      fetch(`${svc.url}/v1/avatars/${other}`, { headers: { Authorization: `Bearer ${key}` } }),
      fetch(`${svc.url}/v1/avatars/av_${other.replaceAll('_', '%5F')}`, { headers: { Authorization: `Bearer ${key}` } }),
      fetch(`${svc.url}/v1/avatars/${encodeURIComponent(secret)}`, { headers: { Authorization: `Bearer ${key}` } }),
      fetch(`${svc.url}/v1/avatars?cursor=${other}`, { headers: { Authorization: `Bearer ${key}` } }),
      fetch(`${svc.url}/v1/me`, { headers: { Authorization: `Bearer ${other}`, 'X-Api-Key': key } }),
    ]);
    await Promise.all(answers.map((a) => a.text()));

    const written = JSON.stringify(lines.slice(from));
    expect(accessLines().slice(-5)).toHaveLength(5);
    for (const leaked of [key, other, secret, encodeURIComponent(secret), other.slice('sk_test_'.length)]) expect(written).not.toContain(leaked);
    expect(accessLines().filter((l) => l.req.path === '/v1/avatars/sk_test_…(redacted)')).toHaveLength(1);
    expect(accessLines().filter((l) => l.req.path === '/v1/avatars/whsec_…(redacted)')).toHaveLength(1);
  });

  it('labels the operational routes in /metrics by their path', async () => {
    await fetch(`${svc.url}/healthz`);

    const metrics = await (await fetch(`${svc.url}/metrics`)).text();

    expect(metrics).toMatch(/http_requests_total\{method="GET",route="\/healthz",status="200"\} 1/);
    expect(accessLines().some((l) => l.req.path === '/healthz' && l.res.status === 200)).toBe(true);
  });
});
