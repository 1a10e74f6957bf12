// Generated inputs against this project's own server: 2,000 requests made from the
// contract's request schemas pass in the contract profile, are all refused (nothing
// accepted, no credit held or spent), and keep within the limits: the sandbox clock
// moves the empty account over its windows, so no request is left refused with 429.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConformance } from '../../conformance/src/run.ts';
import { startTestService, type TestService } from '../../server/test/support/harness.ts';
import { keysForRun } from './support.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ env: { ENGINE_AVATAR_MS: '200', ENGINE_VIDEO_MS: '200', JOB_POLL_MS: '50', WEBHOOK_POLL_MS: '100' } });
});
afterAll(() => svc?.dispose());

describe('generated inputs against the server on the embedded store', () => {
  it('when 2,000 are sent in the contract profile, then every answer is the one expected and nothing is charged', async () => {
    const keys = await keysForRun(svc.store, svc.domain.clock);
    const notes: string[] = [];

    const report = await runConformance({ baseUrl: svc.url, ...keys, profile: 'contract', only: ['generated'], fuzz: 2000, seed: 2026, onProgress: (event) => event.type === 'note' && notes.push(event.message) });

    const generated = report.results.map((r) => `${r.id}: ${r.outcome}${r.failure ? ` ${JSON.stringify(r.failure)}` : ''}`);
    expect(generated).toEqual(['generated.creates: passed', 'generated.reads: passed']);
    expect(notes.find((n) => n.startsWith('generated.creates:'))).toMatch(/^generated\.creates: 1500 generated creates: (\d+ (valid|invalid|media-type|malformed)(, )?){4}$/);
    expect(notes.find((n) => n.startsWith('generated.reads:'))).toBe('generated.reads: 500 generated reads');
  }, 300_000);
});
