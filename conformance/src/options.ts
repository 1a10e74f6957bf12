// What a run is told, with the defaults filled in. The defaults are the contract's
// numbers (openapi/README.md); tests against small fixture servers pass smaller ones.
import type { Profile } from './check.ts';

export interface RunOptions {
  /** Scheme, host and port of the implementation, without /v1. */
  baseUrl: string;
  /** A key of an account with credits: the jobs of the run are made with it. */
  apiKey: string;
  /** A key of another account (per-key limits, account isolation). */
  secondKey?: string;
  /** A key of an account without credits (402, and cheap validation requests). */
  emptyKey?: string;
  /** The webhook signing secret of the integration. */
  signingSecret?: string;
  profile?: Profile;
  /** Check IDs or tags to run (`*` wildcards); empty runs all. */
  only?: string[];
  /** Check IDs or tags to leave out. */
  skip?: string[];
  /**
   * Text that makes a job fail on the implementation under test, put in an avatar's
   * name and a video's script. Defaults to the contract's sandbox trigger, except in the
   * production profile. null: the implementation has none.
   */
  failMarker?: string | null;
  /** The built-in webhook receiver; false runs without (webhook checks are skipped). */
  receiver?: { host?: string; port?: number; publicUrl?: string } | false;
  /** Where photo avatars point; the service may fetch it. */
  photoUrl?: string;
  /** The longest a job may take to reach ready or failed. */
  jobTimeoutSeconds?: number;
  pollInitialDelayMs?: number;
  pollMaxDelayMs?: number;
  /** How long terminal records are watched for changes (ST-TERMINAL). */
  terminalObserveSeconds?: number;
  /** The contract's first webhook retry delay (ND-DELIVERY: about 5 s, +-20 %). */
  webhookFirstRetrySeconds?: number;
  /** How long to wait for a retry after the receiver answered 500. */
  webhookRetryTimeoutSeconds?: number;
  /** Accepted RateLimit-Limit values per bucket: the per-minute and per-day limits. */
  expectedLimits?: { generation?: number[]; read?: number[] };
  requestTimeoutMs?: number;
  /** The longest one request waits out 429s before giving up. */
  maxRateLimitWaitSeconds?: number;
  /** The bundled contract; defaults to generated/openapi.json. */
  openapiPath?: string;
  onProgress?: (event: ProgressEvent) => void;
  /** Injectable clock, for tests. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export type ProgressEvent =
  | { type: 'start'; total: number; profile: Profile; baseUrl: string }
  | { type: 'check-start'; id: string; title: string }
  | { type: 'check-end'; result: import('./report/model.ts').CheckResult }
  | { type: 'note'; message: string };

export type ResolvedOptions = Required<
  Omit<RunOptions, 'secondKey' | 'emptyKey' | 'signingSecret' | 'onProgress' | 'failMarker' | 'receiver' | 'openapiPath' | 'expectedLimits'>
> & {
  secondKey: string | undefined;
  emptyKey: string | undefined;
  signingSecret: string | undefined;
  failMarker: string | null;
  receiver: { host: string; port: number; publicUrl: string | undefined } | false;
  openapiPath: string | undefined;
  expectedLimits: { generation: number[]; read: number[] };
  onProgress: (event: ProgressEvent) => void;
};

export const CONTRACT_FAIL_MARKER = '[sandbox:fail]';

export function resolveOptions(options: RunOptions): ResolvedOptions {
  const profile = options.profile ?? 'core';
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    apiKey: options.apiKey,
    secondKey: options.secondKey || undefined,
    emptyKey: options.emptyKey || undefined,
    signingSecret: options.signingSecret || undefined,
    profile,
    only: options.only ?? [],
    skip: options.skip ?? [],
    failMarker: options.failMarker === undefined ? (profile === 'production' ? null : CONTRACT_FAIL_MARKER) : options.failMarker || null,
    receiver:
      options.receiver === false
        ? false
        : { host: options.receiver?.host ?? '127.0.0.1', port: options.receiver?.port ?? 0, publicUrl: options.receiver?.publicUrl },
    photoUrl: options.photoUrl ?? 'https://images.example.com/portraits/conformance-runner.jpg',
    jobTimeoutSeconds: options.jobTimeoutSeconds ?? 300,
    pollInitialDelayMs: options.pollInitialDelayMs ?? 500,
    pollMaxDelayMs: options.pollMaxDelayMs ?? 5000,
    terminalObserveSeconds: options.terminalObserveSeconds ?? 3,
    webhookFirstRetrySeconds: options.webhookFirstRetrySeconds ?? 5,
    webhookRetryTimeoutSeconds: options.webhookRetryTimeoutSeconds ?? 60,
    expectedLimits: {
      generation: options.expectedLimits?.generation ?? [10, 300],
      read: options.expectedLimits?.read ?? [120, 10_000],
    },
    requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
    maxRateLimitWaitSeconds: options.maxRateLimitWaitSeconds ?? 150,
    openapiPath: options.openapiPath,
    onProgress: options.onProgress ?? (() => undefined),
    now: options.now ?? Date.now,
    sleep: options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
  };
}
