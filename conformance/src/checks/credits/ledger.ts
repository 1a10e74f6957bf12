// Shared arithmetic of the credit checks over the balances GET /v1/me shows (ND-ME).
import { skip } from '../../context.ts';
import type { KeyName } from '../../http.ts';
import { balanceOf, type Balance, type TrackedJob, type World } from '../../world.ts';

export function balances(world: World, key: KeyName, from: string, to: string): { before: Balance; after: Balance } {
  const before = balanceOf(world.snapshots.get(`${key}:${from}`));
  const after = balanceOf(world.snapshots.get(`${key}:${to}`));
  if (!before || !after) skip(`GET /v1/me of the ${key} key shows no credit balance (credits.available, used, reserved): nothing to observe from outside`);
  return { before, after };
}

export function creditsOf(job: TrackedJob): number | undefined {
  const credits = job.terminal?.credits ?? job.createdRecord?.credits;
  return typeof credits === 'number' ? credits : undefined;
}

/** Credits of the key's jobs that ended ready: what its account must have been charged. */
export function chargedFor(jobs: readonly TrackedJob[], key: KeyName): { total: number; known: boolean; count: number } {
  const ready = jobs.filter((job) => job.key === key && job.terminal?.status === 'ready');
  const costs = ready.map(creditsOf);
  return { total: costs.reduce<number>((sum, c) => sum + (c ?? 0), 0), known: costs.every((c) => c !== undefined), count: ready.length };
}

export function show(balance: Balance): string {
  return `available ${balance.available}, reserved ${balance.reserved}, used ${balance.used}`;
}
