// What a generated-input check builds its requests from: the contract, the
// implementation's spelling, the run's webhook receiver and another account's IDs.
import type { CheckContext } from '../context.ts';
import type { ResolvedOptions } from '../options.ts';
import type { GeneratorDeps } from './requests.ts';

/** The share of `--fuzz` requests each check sends: a quarter are reads. */
export function generatedCount(options: Pick<ResolvedOptions, 'fuzz'>, kind: 'creates' | 'reads'): number {
  const reads = Math.floor(options.fuzz / 4);
  return kind === 'reads' ? reads : options.fuzz - reads;
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
