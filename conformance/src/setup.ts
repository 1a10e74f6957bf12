// Setup warnings: what a run was badly set up with, said at the top of every report and
// on the console as soon as it can be known, so that a reader fixes the setup before
// reading forty failures it caused. A refused main key ends the run in the preflight
// (preflight.ts); these are the rest: balances near what the run may spend, a sandbox
// clock the implementation profile names but the service refuses, a member of the
// profile that the service's answers never had, a photo URL the service could not
// fetch, a receiver the service never reached.
import type { PlannedBudget } from './budget.ts';
import { at, BALANCE_MEMBERS, type ImplementationProfile } from './implementation/profile.ts';
import type { Exchange } from './http.ts';

/**
 * Before the first check: the main account's balance against what the selected checks
 * spend on a correct service: every create they may send but those meant to be refused
 * over a rate limit (budget.ts's window creates), which a correct service never charges.
 * Below it, a run is refused with 402 before its end and reads as failures.
 */
export function budgetWarning(available: number | undefined, planned: PlannedBudget): string | undefined {
  if (available === undefined || planned.credits === undefined || !planned.prices) return undefined;
  const charged = planned.credits - planned.windowCreates.avatar * planned.prices.avatar - planned.windowCreates.avatar_video * planned.prices.avatar_video;
  if (available >= charged) return undefined;
  return `--api-key's account has ${available} credits available and the selected checks' creates that a correct service charges come to ${charged} (the budget, every create counted as charged, is ${planned.credits}): the run would be refused with 402 before its end; top the account up, or --skip the checks you do not need`;
}

/** Before the first check: a sandbox clock the profile names that the service refused, and why. */
export function clockWarning(profileNamesClock: boolean, wanted: boolean, reason: string | undefined): string | undefined {
  if (!profileNamesClock || !wanted || reason === undefined) return undefined;
  return `the implementation profile names a sandbox clock, but the service refused it (${reason}): rate-limit windows are waited out and the checks that need a clock do not run; fix the profile's clock, or run with --no-clock`;
}

/**
 * Before the first check: members of the profile that GET /v1/me's answer does not have
 * (a pointer that never matched reads as "not shown", and the checks that need it skip).
 */
export function profileWarnings(profile: ImplementationProfile, me: Exchange | undefined): string[] {
  if (!me || me.status !== 200 || me.json === undefined) return [];
  const unmatched: string[] = [];
  const pointers: [string, string | null | undefined][] = [
    ['account.id', profile.account.id],
    ['account.mode', profile.account.mode],
    ...BALANCE_MEMBERS.map((member): [string, string | undefined] => [`account.credits.${member}`, profile.account.credits?.[member]]),
    ...profile.account.generationWindows.flatMap((window, i) => [
      [`account.generation_windows[${i}].limit`, window.limit],
      [`account.generation_windows[${i}].remaining`, window.remaining],
      [`account.generation_windows[${i}].reset`, window.reset],
    ] as [string, string][]),
  ];
  for (const [name, pointer] of pointers) {
    if (pointer === null || pointer === undefined) continue;
    if (at(me.json, pointer) === undefined) unmatched.push(`${name} (${pointer})`);
  }
  if (unmatched.length === 0) return [];
  return [`the implementation profile names ${unmatched.length === 1 ? 'a member' : 'members'} that GET /v1/me's answer does not have: ${unmatched.join(', ')}; what ${unmatched.length === 1 ? 'it reads' : 'they read'} counts as not shown, and the checks that need ${unmatched.length === 1 ? 'it' : 'them'} do not run; fix the pointers in the profile`];
}

/** The photo avatar's create refused, or its job failed, naming the photo: the service could not use --photo-url. */
export function photoWarning(job: { create: Exchange; ended: 'ready' | 'failed' | undefined; expected: string; terminal: unknown } | undefined, photoUrl: string): string | undefined {
  if (!job) return undefined;
  const { create } = job;
  if (create.status >= 400 && PHOTO_WORDS.test(create.bodyText)) {
    return `the service refused the photo avatar's photo URL ${photoUrl} (${create.method} ${create.path} answered ${create.status}): the checks built on the photo avatar cannot pass; give --photo-url a portrait the service can fetch`;
  }
  const terminal = JSON.stringify(job.terminal ?? null);
  if (job.ended === 'failed' && job.expected !== 'failed' && PHOTO_WORDS.test(terminal)) {
    return `the photo avatar failed over its photo URL ${photoUrl}: ${excerptOf(terminal)}; give --photo-url a portrait the service can fetch`;
  }
  return undefined;
}

/** Words a refusal or a failure over a photo that could not be fetched uses. */
const PHOTO_WORDS = /photo|image|file\.url|fetch|download|unreachable/i;

/** After the run's jobs ended: webhooks were asked for and none reached the receiver. */
export function receiverWarning(receiverBase: string | undefined, deliveries: number, jobsEndedWithWebhook: number): string | undefined {
  if (receiverBase === undefined || deliveries > 0 || jobsEndedWithWebhook === 0) return undefined;
  return `the run's jobs that named the receiver ended and no webhook reached it at ${receiverBase}: the service cannot reach the runner there; run the receiver where the service can call it (--receiver-host, --receiver-port, --receiver-public-url)`;
}

function excerptOf(text: string): string {
  return text.length <= 200 ? text : `${text.slice(0, 200)}…`;
}
