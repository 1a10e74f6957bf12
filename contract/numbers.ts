// The contract's numbers, read once from the bundle: each rate-limit bucket's windows,
// each create's price, the default plan's credits, the webhook delivery's timeout and
// retry schedule, the file links' lifetime, and every problem code with its status and title. The contract states
// them in x- members (openapi/README.md, "Vendor extensions"); the server's rules, the
// runner's defaults and texts, the benchmark and the docs' tables all take them from
// here, so changing one is an edit of openapi/ and `npm run generate`.
// test/contract/numbers.test.ts holds the contract's prose to them and scans the code
// for copies written by hand.
import {
  bucketLimitsTextOf,
  bucketWindowsOf,
  creditCosts,
  fileLinks,
  monthlyCredits,
  problemCodes,
  rateLimitBuckets,
  webhookDelivery,
  type CreateKind,
  type FileLinks,
  type ProblemCode,
  type RateLimitBuckets,
  type RateLimitWindow,
  type WebhookDelivery,
} from './readNumbers.ts';
import { loadBundle } from './schemas.ts';

export * from './readNumbers.ts';

const bundle = loadBundle();

/** The contract's buckets: bucket -> its windows ({name, limit, windowSeconds}). */
export const RATE_LIMIT_BUCKETS: RateLimitBuckets = rateLimitBuckets(bundle);
/** The contract's prices, in credits per job. */
export const CREDIT_COSTS: Readonly<Record<CreateKind, number>> = creditCosts(bundle);
/** The contract's credits a month of the default plan. */
export const MONTHLY_CREDITS: number = monthlyCredits(bundle);
/** The contract's webhook delivery. */
export const WEBHOOK_DELIVERY: WebhookDelivery = webhookDelivery(bundle);
/** The contract's file links: their lifetime and the unsigned links' grace (ND-FILE-LINKS). */
export const FILE_LINKS: FileLinks = fileLinks(bundle);
/** The contract's problem codes. */
export const PROBLEM_CODES: Readonly<Record<string, ProblemCode>> = problemCodes(bundle);

/** A bucket's windows; throws naming the bucket when the contract has none of that name. */
export function bucketWindows(bucket: string): readonly RateLimitWindow[] {
  return bucketWindowsOf(RATE_LIMIT_BUCKETS, bucket);
}

/** A bucket's limits as the texts write them: "120/minute and 10,000/day". */
export function bucketLimitsText(bucket: string): string {
  return bucketLimitsTextOf(RATE_LIMIT_BUCKETS, bucket);
}
