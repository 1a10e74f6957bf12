// The conformance runner against the Prism mock of the contract, in the mock profile:
// what a stateless mock can satisfy passes; the stateful checks are reported
// not applicable rather than failed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConformance } from '../../conformance/src/run.ts';
import { startMock } from '../../scripts/mock.ts';

let mock: Awaited<ReturnType<typeof startMock>>;

beforeAll(async () => {
  mock = await startMock({ port: 0 });
}, 60_000);
afterAll(() => mock?.stop());

describe('the conformance runner against the Prism mock', () => {
  it('passes the mock profile, with the stateful checks not applicable', async () => {
    const report = await runConformance({ baseUrl: mock.url, apiKey: 'sk_test_mock', secondKey: 'sk_test_mock2', emptyKey: 'sk_test_mock3', profile: 'mock', receiver: false });

    const failed = report.results.filter((r) => r.outcome === 'failed').map((r) => `${r.id}: ${r.failure?.message}`);
    expect(failed, failed.join('\n')).toEqual([]);
    expect(report.verdict).toBe('pass');
    expect(report.counts.passed).toBeGreaterThan(5);
    expect(report.counts.notApplicable).toBeGreaterThan(10);
  }, 120_000);
});
