// The several-jobs claim of the stores that claim one job at a time inside it (the
// embedded store, in one transaction; the memory store): the rule that a claim takes at
// most one video of an account, as the single claim's skip list makes it, lives here once.
import type { Job } from '../domain/model.ts';

/** Up to `limit` jobs from `claimOne`, each claim passing over the accounts whose video was taken. */
export function claimEach(limit: number, skipVideosOf: readonly string[], claimOne: (skip: readonly string[]) => Job | null): Job[] {
  const skipped = [...skipVideosOf];
  const claimed: Job[] = [];
  while (claimed.length < limit) {
    const job = claimOne(skipped);
    if (!job) break;
    claimed.push(job);
    if (job.kind === 'avatar_video') skipped.push(job.accountId);
  }
  return claimed;
}
