// What a run is told, with the defaults filled in. The defaults are the contract's
// numbers (openapi/README.md); tests against small fixture servers pass smaller ones.
import { RATE_LIMIT_BUCKETS, WEBHOOK_DELIVERY } from '../../contract/numbers.ts';
import { CONTRACT_PROFILE, type ImplementationProfile, type JobKind, UNSTATED_TIMINGS } from './implementation/profile.ts';
import type { Profile } from './outcome.ts';

export interface RunOptions {
  /** Scheme, host and port of the implementation, without /v1. */
  baseUrl: string;
  /** A key of an account with credits: the jobs of the run are made with it. */
  apiKey: string;
  /** A key of another account (per-key limits, account isolation). */
  secondKey?: string;
  /** A key of an account without credits (402, and cheap validation requests). */
  emptyKey?: string;
  /**
   * A key of a workspace, and a key of the owner account it belongs to (source 1.5, 5.2),
   * both accounts other than those of apiKey and secondKey: credits.workspace-charged
   * makes a job with the workspace's and holds the owner's balance still. Without both
   * that check is not applicable.
   */
  workspaceKey?: string;
  ownerKey?: string;
  /** The webhook signing secret of the integration. */
  signingSecret?: string;
  /**
   * The --api-key account is opted in to Standard Webhooks (ND-STANDARD-WEBHOOKS): its
   * deliveries carry webhook-id, webhook-timestamp and webhook-signature as well, and
   * webhooks.standard-signature checks them beside X-Service-*. Default false.
   */
  standardWebhooks?: boolean;
  profile?: Profile;
  /**
   * How the implementation made the source's "not shown" choices (implementation/
   * profile.ts); defaults to this project's contract.
   */
  implementation?: ImplementationProfile;
  /** Check IDs or tags to run (`*` wildcards); empty runs all. */
  only?: string[];
  /** Check IDs or tags to leave out. */
  skip?: string[];
  /**
   * Text that makes a job fail on an implementation shaped like the contract, put in an
   * avatar's name and a video's script: it replaces the implementation profile's
   * `failure`. Without it the profile's trigger is used, except that the contract's own
   * trigger is not used in the production profile. null: there is none.
   */
  failMarker?: string | null;
  /** The built-in webhook receiver; false runs without (webhook checks are skipped). */
  receiver?: { host?: string; port?: number; publicUrl?: string } | false;
  /** Where photo avatars point; the service may fetch it. */
  photoUrl?: string;
  /**
   * The longest a job of either kind may take to reach ready or failed. Default: the
   * implementation profile's `timings` for each kind (UNSTATED_TIMINGS without them).
   */
  jobTimeoutSeconds?: number;
  pollInitialDelayMs?: number;
  pollMaxDelayMs?: number;
  /** How long terminal records are watched for changes (ST-TERMINAL). */
  terminalObserveSeconds?: number;
  /** The contract's first webhook retry delay (ND-DELIVERY, info.x-webhook-delivery). */
  webhookFirstRetrySeconds?: number;
  /**
   * The longest a webhook attempt may come after it is due (its job's end, its retry's
   * moment): how long the run waits for one past that moment. Default: the implementation
   * profile's `timings.delivery` (UNSTATED_TIMINGS without them).
   */
  webhookRetryTimeoutSeconds?: number;
  /**
   * The whole retry schedule to hold the implementation to, where a sandbox clock lets
   * the run see it: the wait before each retry in seconds, and the relative jitter.
   * Default: the implementation profile's `webhook_retries` (the contract's
   * info.x-webhook-delivery).
   */
  webhookRetries?: { delaysSeconds: number[]; jitter: number };
  /** Accepted RateLimit-Limit values per bucket: the per-minute and per-day limits. */
  expectedLimits?: { generation?: number[]; read?: number[] };
  /**
   * The length in seconds of the window each expected limit belongs to, in the same
   * order (the source's minute and day): RateLimit-Reset and Retry-After never exceed
   * the window they describe.
   */
  windowSeconds?: number[];
  requestTimeoutMs?: number;
  /**
   * Use the implementation's sandbox clock where the implementation profile names one
   * and the keys have it (default). false: wait windows out in real time, and leave the
   * checks that need the clock not run.
   */
  clock?: boolean;
  /** The longest one request waits out 429s before giving up. */
  maxRateLimitWaitSeconds?: number;
  /**
   * Requests generated from the request schemas, sent with the key without credits
   * after everything else (0, the default: none).
   */
  fuzz?: number;
  /** The seed of the generated requests; a run prints it, and the same seed makes the same requests. */
  seed?: number;
  /** The bundled contract; defaults to generated/openapi.json. */
  openapiPath?: string;
  onProgress?: (event: ProgressEvent) => void;
  /**
   * The longest the whole run may take, in seconds, when that is less than the bound the
   * run works out from its checks and timings (e.g. a CI job's budget): checks not
   * reached by then are reported not run.
   */
  maxRunSeconds?: number;
  /**
   * The most credits the run may spend: a run whose checks may spend more (budget.ts) does
   * not start. A run on a live key (the production profile, or GET /v1/me saying live)
   * needs it.
   */
  maxCredits?: number;
  /** Injectable clock, for tests. A sleep is given the signal of the deadline it runs under. */
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export type ProgressEvent =
  | { type: 'start'; total: number; profile: Profile; implementation: string; baseUrl: string; boundSeconds: number; budget?: string; generated?: { count: number; seed: number } }
  | { type: 'check-start'; id: string; title: string }
  | { type: 'check-end'; result: import('./outcome.ts').CheckResult }
  | { type: 'note'; message: string }
  /** The run was badly set up (setup.ts): shown at once, whatever the verbosity. */
  | { type: 'setup-warning'; message: string };

export type ResolvedOptions = Required<
  Omit<RunOptions, 'jobTimeoutSeconds' | 'secondKey' | 'emptyKey' | 'workspaceKey' | 'ownerKey' | 'signingSecret' | 'onProgress' | 'failMarker' | 'receiver' | 'openapiPath' | 'expectedLimits' | 'implementation' | 'webhookRetries' | 'maxRunSeconds' | 'maxCredits'>
> & {
  /** The longest a job of each kind may take: --job-timeout for both, else the implementation profile's timings. */
  jobSeconds: Record<JobKind, number>;
  /** Given for this run; else the bound the run works out holds alone. */
  maxRunSeconds: number | undefined;
  maxCredits: number | undefined;
  /** Given for this run; else the implementation profile's schedule holds. */
  webhookRetries: { delaysSeconds: number[]; jitter: number } | undefined;
  secondKey: string | undefined;
  emptyKey: string | undefined;
  workspaceKey: string | undefined;
  ownerKey: string | undefined;
  signingSecret: string | undefined;
  /** The implementation profile, its failure trigger resolved for this run. */
  implementation: ImplementationProfile;
  receiver: { host: string; port: number; publicUrl: string | undefined } | false;
  openapiPath: string | undefined;
  expectedLimits: { generation: number[]; read: number[] };
  onProgress: (event: ProgressEvent) => void;
};

/** The contract's limits of each bucket the runner judges, in the order of its windows (info.x-rate-limit-buckets). */
export const CONTRACT_LIMITS = {
  read: RATE_LIMIT_BUCKETS.read!.map((w) => w.limit),
  generation: RATE_LIMIT_BUCKETS.generation!.map((w) => w.limit),
};
/** The length in seconds of each of those windows (the buckets share them: test/contract/numbers.test.ts). */
export const CONTRACT_WINDOW_SECONDS = RATE_LIMIT_BUCKETS.read!.map((w) => w.windowSeconds);
/** The contract's first webhook retry delay. */
export const CONTRACT_FIRST_RETRY_SECONDS = WEBHOOK_DELIVERY.retryDelaysSeconds[0] ?? 0;

/**
 * The latest a first retry may come, by the contract's jitter: how long every check that
 * awaits one gives it (before its own slack for queues and clocks).
 */
export function firstRetryLatestSeconds(options: Pick<ResolvedOptions, 'webhookFirstRetrySeconds'>): number {
  return options.webhookFirstRetrySeconds * (1 + WEBHOOK_DELIVERY.jitter);
}

/** The whole retry schedule the run holds the implementation to: --webhook-retries, else its profile's; undefined where neither states one. */
export function retryScheduleOf(options: Pick<ResolvedOptions, 'webhookRetries' | 'implementation'>): { delaysSeconds: number[]; jitter: number } | undefined {
  return options.webhookRetries ?? options.implementation.retries ?? undefined;
}

export function resolveOptions(options: RunOptions): ResolvedOptions {
  const profile = options.profile ?? 'core';
  const implementation = implementationFor(options, profile);
  // The contract's timings are its sandbox engine's; a production deployment's jobs are
  // real renders that no document here times, so they get what an unstated profile gets.
  const timings = (implementation.isContract && profile === 'production' ? null : implementation.timings) ?? UNSTATED_TIMINGS;
  const job = options.jobTimeoutSeconds;
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    apiKey: options.apiKey,
    secondKey: options.secondKey || undefined,
    emptyKey: options.emptyKey || undefined,
    workspaceKey: options.workspaceKey || undefined,
    ownerKey: options.ownerKey || undefined,
    signingSecret: options.signingSecret || undefined,
    standardWebhooks: options.standardWebhooks ?? false,
    profile,
    only: options.only ?? [],
    skip: options.skip ?? [],
    implementation,
    receiver:
      options.receiver === false
        ? false
        : { host: options.receiver?.host ?? '127.0.0.1', port: options.receiver?.port ?? 0, publicUrl: options.receiver?.publicUrl },
    photoUrl: options.photoUrl ?? 'https://images.example.com/portraits/conformance-runner.jpg',
    jobSeconds: job === undefined ? { ...timings.jobSeconds } : { avatar: job, avatar_video: job },
    pollInitialDelayMs: options.pollInitialDelayMs ?? 500,
    pollMaxDelayMs: options.pollMaxDelayMs ?? 5000,
    terminalObserveSeconds: options.terminalObserveSeconds ?? 3,
    webhookFirstRetrySeconds: options.webhookFirstRetrySeconds ?? CONTRACT_FIRST_RETRY_SECONDS,
    webhookRetryTimeoutSeconds: options.webhookRetryTimeoutSeconds ?? timings.deliverySeconds,
    webhookRetries: options.webhookRetries,
    expectedLimits: {
      generation: options.expectedLimits?.generation ?? CONTRACT_LIMITS.generation,
      read: options.expectedLimits?.read ?? CONTRACT_LIMITS.read,
    },
    windowSeconds: options.windowSeconds ?? CONTRACT_WINDOW_SECONDS,
    clock: options.clock ?? true,
    requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
    maxRateLimitWaitSeconds: options.maxRateLimitWaitSeconds ?? 150,
    fuzz: options.fuzz ?? 0,
    seed: options.seed ?? newSeed(),
    openapiPath: options.openapiPath,
    onProgress: options.onProgress ?? (() => undefined),
    now: options.now ?? Date.now,
    maxRunSeconds: options.maxRunSeconds,
    maxCredits: options.maxCredits,
    sleep: options.sleep ?? sleepUnlessAborted,
  };
}

/** A timer that ends early when its deadline does, so that no sleep outlives the run. */
function sleepUnlessAborted(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}

/** The implementation profile with the run's failure trigger in place. */
function implementationFor(options: RunOptions, profile: Profile): ImplementationProfile {
  const implementation = options.implementation ?? CONTRACT_PROFILE;
  if (options.failMarker === null || options.failMarker === '') return { ...implementation, failure: null };
  if (options.failMarker !== undefined) return { ...implementation, failure: markerFailure(implementation, options.failMarker) };
  // The contract's sandbox trigger does nothing on a production key.
  if (implementation.isContract && profile === 'production') return { ...implementation, failure: null };
  return implementation;
}

/** The marker after the avatar's name and after the video's script, wherever the video template puts it. */
function markerFailure(implementation: ImplementationProfile, marker: string): ImplementationProfile['failure'] {
  const scriptMember = Object.entries(implementation.create.video.body).find(([, value]) => typeof value === 'string' && value.includes('{{script}}'))?.[0] ?? 'script';
  return { avatar: { name: `{{name}} ${marker}` }, video: { [scriptMember]: `{{script}} ${marker}` } };
}

/** A seed for a run that was given none: a non-negative 31-bit integer, easy to type back. */
function newSeed(): number {
  return Math.floor(Math.random() * 0x8000_0000);
}
