// The conformance runner's whole contract run, sent through Prism's validating proxy in
// front of this project's server: a second reading of the contract, by another tool,
// finds no answer of the server that breaks it. (Requests may break it on purpose: the
// runner sends invalid bodies to see them refused.) All but the check that spends whole
// days of the read and generation buckets: its ten thousand answers are the same few
// shapes, and Prism's reading of each cost more CPU than the rest of the run; the check
// itself runs against the server directly in conformance.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConformance } from '../../conformance/src/run.ts';
import { startMock, type MockServer } from '../../scripts/mock.ts';
import { startTestService, type TestService } from '../../server/test/support/harness.ts';
import { expectPass, keysForRun, SPENDS_DAYS } from './support.ts';

let svc: TestService;
let proxy: MockServer;
const violations: string[] = [];
const exchanges: string[] = [];

beforeAll(async () => {
  svc = await startTestService({ env: { ENGINE_AVATAR_MS: '200', ENGINE_VIDEO_MS: '200', JOB_POLL_MS: '50', WEBHOOK_POLL_MS: '100' } });
  proxy = await startMock({
    port: 0,
    upstream: svc.url,
    onLine: (line) => {
      if (/Violation: response/.test(line)) violations.push(line.trim());
      if (/Forwarding/.test(line)) exchanges.push(line);
    },
  });
}, 60_000);
afterAll(async () => {
  await proxy?.stop();
  await svc?.dispose();
});

describe('the contract run through Prism’s validating proxy', () => {
  it('passes, and Prism finds no response that breaks the contract', async () => {
    const keys = await keysForRun(svc.store, svc.domain.clock);

    const report = await runConformance({ baseUrl: proxy.url, ...keys, profile: 'contract', skip: [SPENDS_DAYS] });

    expectPass(report);
    expect(report.results.map((r) => r.id)).not.toContain(SPENDS_DAYS);
    expect(exchanges.length).toBeGreaterThan(100);
    expect(violations).toEqual([]);
  }, 300_000);
});
