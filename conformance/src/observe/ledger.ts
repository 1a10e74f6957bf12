// Shared arithmetic of the credit checks over the balances GET /v1/me shows, where the
// implementation profile says it shows them. A profile may name only some of available,
// reserved and used: each check judges what is shown, and one that needs a member the
// profile leaves out is not applicable.
import type { CheckContext } from '../context.ts';
import type { Exchange, KeyName } from '../http.ts';
import type { BalanceMember } from '../implementation/profile.ts';
import type { Balance, Shape } from '../implementation/shape.ts';
import { notApplicable, skip } from '../outcome.ts';
import type { TrackedJob } from '../world.ts';

/**
 * Not applicable unless the profile says GET /v1/me shows each of `members` (at least one
 * of them with `any`); `why` says what the check cannot see without them.
 */
export function needShown(shape: Shape, members: readonly BalanceMember[], why: string, options: { any?: boolean } = {}): void {
  const missing = members.filter((member) => !shape.shows(member));
  if (missing.length === 0 || (options.any && missing.length < members.length)) return;
  const named = shape.profile.account.credits === null ? 'names no balance (account.credits is null)' : `does not name ${missing.join(' or ')} (account.credits)`;
  notApplicable(`${why}, and the implementation profile ${named}: GET /v1/me does not show ${missing.join(options.any ? ' or ' : ' and ')}`);
}

export function balances(ctx: CheckContext, key: KeyName, from: string, to: string): { before: Balance; after: Balance } {
  needShown(ctx.shape, ['available', 'reserved', 'used'], 'needs a credit balance', { any: true });
  const before = ctx.shape.balance(ctx.world.snapshots.get(`${key}:${from}`));
  const after = ctx.shape.balance(ctx.world.snapshots.get(`${key}:${to}`));
  if (!before || !after) skip(`GET /v1/me of the ${key} key did not show the credit balance where the implementation profile says (account.credits)`);
  return { before, after };
}

/** The members shown in both balances whose values differ. */
export function changed(before: Balance, after: Balance): BalanceMember[] {
  return (Object.keys(before) as BalanceMember[]).filter((member) => after[member] !== undefined && after[member] !== before[member]);
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

/**
 * What the key's jobs cost as of a balance read: `settled`, the price of those seen ready
 * before the read was sent (final in it); `unsettled`, the most that those still under way
 * then (accepted before it was answered, not yet seen to end) may hold or have charged in
 * it. Jobs accepted after the read do not count; undefined where a price is not known.
 */
export function chargedAt(shape: Shape, jobs: readonly TrackedJob[], key: KeyName, read: Exchange): { settled: number | undefined; unsettled: number | undefined } {
  const own = jobs.filter((job) => job.key === key && job.id !== undefined && job.create.startedAt <= read.startedAt + read.durationMs);
  const ended = own.filter((job) => job.terminalAt !== undefined && job.terminalAt <= read.startedAt);
  const settled = chargedFor(shape, ended, key);
  const costs = own.filter((job) => !ended.includes(job)).map((job) => costOf(shape, job));
  return { settled: settled.known ? settled.total : undefined, unsettled: costs.every((c) => c !== undefined) ? costs.reduce<number>((sum, c) => sum + c!, 0) : undefined };
}

/** The members shown, e.g. "available 950, reserved 0" when used is not shown. */
export function show(balance: Balance): string {
  const shown = (['available', 'reserved', 'used'] as const).filter((member) => balance[member] !== undefined);
  return shown.length > 0 ? shown.map((member) => `${member} ${balance[member]}`).join(', ') : 'no balance';
}
