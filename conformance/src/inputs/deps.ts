// What a generated-input check builds its requests from: the contract, the
// implementation's spelling, the run's webhook receiver and another account's IDs.
import type { Allowances } from '../check.ts';
import type { CheckContext } from '../context.ts';
import { CONTRACT_LIMITS, type ResolvedOptions } from '../options.ts';
import { SHRINK_BUDGET } from './property.ts';
import type { GeneratorDeps } from './requests.ts';

/** The share of `--fuzz` requests each check sends: a quarter are reads. */
export function generatedCount(options: Pick<ResolvedOptions, 'fuzz'>, kind: 'creates' | 'reads'): number {
  const reads = Math.floor(options.fuzz / 4);
  return kind === 'reads' ? reads : options.fuzz - reads;
}

/**
 * How long a generated check's requests may take: each one and a shrink's, paced by the
 * key's windows (the limit's share of a window each) or, with a sandbox clock, sent back
 * to back with a move now and then.
 */
export function generatedWaits(a: Allowances, kind: 'creates' | 'reads'): number {
  const requests = generatedCount(a.options, kind) + SHRINK_BUDGET;
  const bucket = kind === 'creates' ? 'generation' : 'read';
  const perWindow = a.options.expectedLimits[bucket][0] ?? CONTRACT_LIMITS[bucket][0]!;
  return requests * (a.clock ? 2 * a.each : a.window / perWindow);
}

export function generatorDeps(ctx: CheckContext): GeneratorDeps {
  // The run's own jobs belong to the main key's account: their IDs are another account's here.
  const ids = (kind: 'avatar' | 'avatar_video') => ctx.world.jobs.filter((job) => job.kind === kind && job.id !== undefined).map((job) => job.id as string);
  return {
    validator: ctx.validator,
    shape: ctx.shape,
    contract: ctx.contract,
    webhookUrl: ctx.receiver?.urlFor('generated', 'ok'),
    photoUrl: ctx.options.photoUrl,
    foreignIds: { avatars: ids('avatar'), videos: ids('avatar_video') },
  };
}
