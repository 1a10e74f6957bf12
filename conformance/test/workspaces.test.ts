// credits.workspace-charged on its own: judged with a workspace's key and its owner's,
// not applicable without them, and failing a service that charges the owner.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixture, type Fixture } from './fixtures/reference.ts';
import { run } from './helpers.ts';

const ID = 'credits.workspace-charged';

describe(ID, () => {
  let fixture: Fixture;
  beforeAll(async () => {
    fixture = await startFixture();
  });
  afterAll(() => fixture.close());

  it('passes when a workspace key and its owner key are given and the workspace pays for its own avatar', async () => {
    const report = await run(fixture, 'contract', { only: [ID] });

    expect(report.results.find((r) => r.id === ID)).toMatchObject({ outcome: 'passed' });
  });

  it('is not applicable, saying which flags it needs, when the keys are not given', async () => {
    const report = await run(fixture, 'contract', { only: [ID], workspaceKey: undefined, ownerKey: undefined });

    expect(report.results.find((r) => r.id === ID)).toMatchObject({ outcome: 'not_applicable', reason: 'needs --workspace-key and --owner-key (a key of a workspace and one of its owner account)' });
    expect(report.verdict).toBe('pass');
  });

  it("is not applicable when the owner key is the run's main account, whose own jobs move its balance", async () => {
    const report = await run(fixture, 'contract', { only: [ID], ownerKey: fixture.keys.main });

    expect(report.results.find((r) => r.id === ID)?.outcome).toBe('not_applicable');
    expect(report.results.find((r) => r.id === ID)?.reason).toMatch(/^--owner-key belongs to the account of --api-key or --second-key/);
  });

  it("fails CR-ACCOUNT, showing the owner's balance move, when the service charges the workspace's job to its owner", async () => {
    const broken = await startFixture({ flaws: { chargeWorkspaceToOwner: true } });
    try {
      const report = await run(broken, 'core', { only: [ID] });
      const result = report.results.find((r) => r.id === ID);

      expect(result?.outcome).toBe('failed');
      expect(result?.failure).toMatchObject({ clause: 'CR-ACCOUNT', expected: "the owner's balance as it was: available 100, reserved 0, used 0", received: 'available 90, reserved 0, used 10' });
      expect(result?.failure?.message).toMatch(/^the owner account's balance moved \(available, used\) while only its workspace made a job$/);
    } finally {
      await broken.close();
    }
  });

  it("fails CR-ACCOUNT, showing the workspace's balance unmoved, when the service charges the workspace's ready job to no one", async () => {
    const broken = await startFixture({ flaws: { freeWorkspaceJobs: true } });
    try {
      const report = await run(broken, 'contract', { only: [ID] });
      const result = report.results.find((r) => r.id === ID);

      expect(result?.outcome).toBe('failed');
      expect(result?.failure).toMatchObject({ clause: 'CR-ACCOUNT', expected: 'at least 10 credits charged to the workspace', received: 'before: available 100, reserved 0, used 0; after: available 100, reserved 0, used 0' });
      expect(result?.failure?.message).toMatch(/^the workspace's avatar av_\w+ is ready, but the workspace's balance shows 0 credits paid$/);
    } finally {
      await broken.close();
    }
  });
});
