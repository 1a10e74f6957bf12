// Core judges the source, and of this project's decisions only what an implementation
// claims: the reference fixture sending RateLimit-Policy and RateLimit in an earlier IETF
// draft's syntax (which the source does not forbid) passes core when its profile claims
// no structured fields, and fails rate-limits.structured-fields-agree, and the verdict,
// where they are claimed, as revision 10 or 11; in the mock profile, where the check is
// optional, the same flaw is a warning that leaves the verdict passing. Revisions 10 and 11
// write the fields alike, so the fixture's revision-10 fields pass under either claim.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseProfile } from '../src/implementation/profile.ts';
import type { CheckResult } from '../src/report/model.ts';
import { startFixture, type Fixture } from './fixtures/reference.ts';
import { optionsFor, run } from './helpers.ts';

const CLI = new URL('../src/cli.ts', import.meta.url).pathname;

const CHECK = 'rate-limits.structured-fields-agree';
const ONLY = { only: [CHECK] };

describe('RateLimit-Policy in an earlier IETF draft\'s syntax', () => {
  let fixture: Fixture;
  beforeAll(async () => {
    fixture = await startFixture({ config: { rateLimitFields: 'earlier-draft' } });
  });
  afterAll(async () => {
    await fixture?.close();
  });

  const resultOf = (results: readonly CheckResult[]) => results.find((r) => r.id === CHECK);

  it('when the implementation profile claims no structured fields, then core passes with exit 0 and the check is not applicable', async () => {
    const report = await run(fixture, 'core', { ...ONLY, implementation: parseProfile({ profile: 1 }) });

    expect(report.verdict).toBe('pass');
    expect(report.exitCode).toBe(0);
    expect(resultOf(report.results)).toMatchObject({ outcome: 'not_applicable', reason: expect.stringMatching(/^the implementation profile claims no structured rate-limit fields \(rate_limits\.fields\)/) });
    expect(report.counts).toMatchObject({ failed: 0, warned: 0, notApplicable: 1 });
  }, 60_000);

  it('when the implementation profile claims revision 10, then the same answers fail the check in core, and the verdict with exit 1', async () => {
    const report = await run(fixture, 'core', { ...ONLY, implementation: parseProfile({ profile: 1, rate_limits: { fields: 'ietf-draft-10' } }) });

    const result = resultOf(report.results);
    expect(result).toMatchObject({ outcome: 'failed', optional: false, failure: { clause: 'ND-RATELIMIT-FIELDS' } });
    expect(result?.failure?.message).toMatch(/do not read as the draft says/);
    expect(result?.failure?.received).toMatch(/ratelimit-policy: \d+;w=\d+/);
    expect(report.verdict).toBe('fail');
    expect(report.exitCode).toBe(1);
    expect(report.counts).toMatchObject({ failed: 1, warned: 0 });
  }, 60_000);

  it('when the implementation profile claims revision 11, as the contract does, then the same answers fail the check, naming the revision claimed', async () => {
    const report = await run(fixture, 'core', { ...ONLY, implementation: parseProfile({ profile: 1, rate_limits: { fields: 'ietf-draft-11' } }) });

    const result = resultOf(report.results);
    expect(result).toMatchObject({ outcome: 'failed', optional: false, failure: { clause: 'ND-RATELIMIT-FIELDS' } });
    expect(result?.failure?.message).toMatch(/do not read as the draft says \(draft-ietf-httpapi-ratelimit-headers-11, as claimed\)/);
    expect(report.exitCode).toBe(1);
  }, 60_000);

  it('when the command runs the mock profile, where the check is optional, then it exits 0, its console shows the warning apart from the failures, and its JUnit counts no failure', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-warning-'));
    // The keys and the fixture's timings as a --config file, as a CI job would give them.
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify(optionsFor(fixture, 'mock', { ...ONLY, receiver: false })));
    const junit = join(dir, 'report.xml');

    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, '--config', config, '--report-junit', junit], { env: { ...process.env, NO_COLOR: '1' } });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.on('close', (exit) => resolve({ code: exit, stdout: out }));
    });

    const lines = stdout.trimEnd().split('\n');
    expect(code, stdout).toBe(0);
    expect(stdout).toMatch(new RegExp(`^1/1 ! ${CHECK.replace(/\./g, '\\.')}  .* \\[optional\\]`, 'm'));
    expect(stdout).toMatch(/^ {6}warning, does not decide the verdict: ND-RATELIMIT-FIELDS: /m);
    expect(stdout).toContain(`Warnings (optional checks; they do not decide the verdict): ${CHECK} (ND-RATELIMIT-FIELDS)`);
    expect(lines.at(-2)).toMatch(/^PASS: .*, 1 warning \(optional checks that do not decide the verdict\)$/);
    expect(lines.at(-1)).toBe('0 passed, 0 failed, 0 skipped');
    const xml = readFileSync(junit, 'utf8');
    expect(xml).not.toContain('<failure');
    expect(xml).toMatch(/<property name="warning" value="ND-RATELIMIT-FIELDS: /);
  }, 60_000);

  it('when judged under the contract, which claims revision 11, then the check fails and so does the verdict, with exit 1', async () => {
    const report = await run(fixture, 'contract', ONLY);

    expect(resultOf(report.results)).toMatchObject({ outcome: 'failed', optional: false, required: true, failure: { clause: 'ND-RATELIMIT-FIELDS' } });
    expect(report.verdict).toBe('fail');
    expect(report.exitCode).toBe(1);
  }, 60_000);
});

describe('RateLimit-Policy and RateLimit as revision 10 of the IETF draft writes them', () => {
  let fixture: Fixture;
  beforeAll(async () => {
    fixture = await startFixture({ config: { rateLimitFields: 'ietf-draft-10' } });
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it.each(['ietf-draft-10', 'ietf-draft-11'] as const)('when the implementation profile claims %s, then core passes the check: the two revisions write the fields alike', async (fields) => {
    const report = await run(fixture, 'core', { ...ONLY, implementation: parseProfile({ profile: 1, rate_limits: { fields } }) });

    expect(report.results.find((r) => r.id === CHECK)).toMatchObject({ outcome: 'passed' });
    expect(report.exitCode).toBe(0);
  }, 60_000);

  it('when the implementation profile claims a revision the runner does not read, then the profile is refused naming the member and its rule', () => {
    expect(() => parseProfile({ profile: 1, rate_limits: { fields: 'ietf-draft-12' } })).toThrow(/rate_limits\.fields: must be equal to one of the allowed values \(enum\)/);
  });
});
