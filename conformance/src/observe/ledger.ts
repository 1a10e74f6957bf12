// Shared arithmetic of the credit checks over the balances GET /v1/me shows, where the
// implementation profile says it shows them.
import type { CheckContext } from '../context.ts';
import type { KeyName } from '../http.ts';
import type { Balance, Shape } from '../implementation/shape.ts';
import { skip } from '../outcome.ts';
import type { TrackedJob } from '../world.ts';

export function balances(ctx: CheckContext, key: KeyName, from: string, to: string): { before: Balance; after: Balance } {
  const before = ctx.shape.balance(ctx.world.snapshots.get(`${key}:${from}`));
  const after = ctx.shape.balance(ctx.world.snapshots.get(`${key}:${to}`));
  if (!before || !after) skip(`GET /v1/me of the ${key} key shows no credit balance where the implementation profile says (account.credits): nothing to observe from outside`);
  return { before, after };
}

/** What a job costs: the profile's price, else what its record states. */
export function costOf(shape: Shape, job: TrackedJob): number | undefined {
  return shape.price(job.kind, job.terminal ?? job.createdRecord);
}

/** Credits of the key's jobs that ended ready: what its account must have been charged. */
export function chargedFor(shape: Shape, jobs: readonly TrackedJob[], key: KeyName): { total: number; known: boolean; count: number } {
  const ready = jobs.filter((job) => job.key === key && job.ended === 'ready');
  const costs = ready.map((job) => costOf(shape, job));
  return { total: costs.reduce<number>((sum, c) => sum + (c ?? 0), 0), known: costs.every((c) => c !== undefined), count: ready.length };
}

export function show(balance: Balance): string {
  return `available ${balance.available}, reserved ${balance.reserved}, used ${balance.used}`;
}
