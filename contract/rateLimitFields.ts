// The structured rate-limit fields of the IETF draft (draft-ietf-httpapi-ratelimit-headers,
// revision 11), beside the source's RateLimit-Limit, -Remaining and -Reset (RL-HEADERS),
// which stay: the contract's ND-RATELIMIT-FIELDS decision. One module writes and reads
// them, so the server's answers, the client's reading and the runner's check can never
// disagree about their syntax. Parsing is RFC 9651's, by a kept library: the fields are
// Lists of parameterised Items, whose corner cases (spaces, quoting, repeated lines
// joined with commas) a hand-written regex would get wrong.
//
// Revisions 10 and 11 write these fields alike: the same two names, a String naming each
// policy, q, qu, w and pk on RateLimit-Policy, r, t and pk on RateLimit. Revision 11 words
// r as the quota available and t as the window in which it may be used, where revision 10
// said the quota remaining and the seconds until more is made available; for this
// service's fixed windows both are RateLimit-Remaining and RateLimit-Reset. So one
// reading serves a claim of either revision.
import { parseList, ParseError, Token } from 'structured-headers';

/** The revision of the draft the contract follows. */
export const RATE_LIMIT_DRAFT = 'draft-ietf-httpapi-ratelimit-headers-11';
/** The revisions whose fields this module writes and reads, oldest first: alike on the wire. */
export const RATE_LIMIT_DRAFT_REVISIONS = [10, 11] as const;
export type RateLimitDraftRevision = (typeof RATE_LIMIT_DRAFT_REVISIONS)[number];

/** Each window of the key's bucket: `"minute";q=10;w=60, "day";q=300;w=86400`. */
export const RATE_LIMIT_POLICY_HEADER = 'RateLimit-Policy';
/** The active window's state: `"minute";r=3;t=42`. */
export const RATE_LIMIT_HEADER = 'RateLimit';

/** One quota policy: its name (a window), its quota and its window in seconds (`w`, optional in the draft). */
export interface QuotaPolicy {
  name: string;
  quota: number;
  windowSeconds?: number;
}

/** One service limit: the policy it belongs to, the quota left (`r`), and the seconds it may be used in, until the window starts again (`t`, optional in the draft). */
export interface ServiceLimit {
  name: string;
  remaining: number;
  resetSeconds?: number;
}

/** A field that is not what the draft says, with the field's name and the rule it breaks. */
export class RateLimitFieldError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'RateLimitFieldError';
    this.field = field;
  }
}

// Policy names are constants of the server (window names): a name a String cannot carry
// as written would be a programming error, not input.
const PLAIN_NAME = /^[a-z0-9_-]+$/;

function name(value: string): string {
  if (!PLAIN_NAME.test(value)) throw new RangeError(`a policy name must be lowercase letters, digits, "_" or "-", got ${JSON.stringify(value)}`);
  return `"${value}"`;
}

/** RFC 9651 §3.3.1: an Integer has at most 15 digits. */
const MAX_SF_INTEGER = 999_999_999_999_999;

function count(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_SF_INTEGER) throw new RangeError(`${what} must be a non-negative integer of at most 15 digits, got ${value}`);
  return value;
}

/** `"minute";q=10;w=60, "day";q=300;w=86400`: every window of the bucket, in the order given. */
export function formatRateLimitPolicy(policies: readonly QuotaPolicy[]): string {
  return policies
    .map((p) => `${name(p.name)};q=${count(p.quota, 'q')}${p.windowSeconds === undefined ? '' : `;w=${count(p.windowSeconds, 'w')}`}`)
    .join(', ');
}

/** `"minute";r=3;t=42`: the state of one window. */
export function formatRateLimit(limit: ServiceLimit): string {
  return `${name(limit.name)};r=${count(limit.remaining, 'r')}${limit.resetSeconds === undefined ? '' : `;t=${count(limit.resetSeconds, 't')}`}`;
}

/**
 * The writer of one policy's RateLimit, as `formatRateLimit` writes it: the name is
 * checked and quoted once, and each call writes only the figures. RateLimit is on every
 * answer of an API, and its policy names are few.
 */
export function rateLimitWriter(policyName: string): (remaining: number, resetSeconds: number) => string {
  const prefix = `${name(policyName)};r=`;
  return (remaining, resetSeconds) => `${prefix}${count(remaining, 'r')};t=${count(resetSeconds, 't')}`;
}

/** The draft's Items: a String naming the policy, with parameters. Inner Lists are not Items. */
function items(field: string, value: string): { name: string; params: Map<string, unknown> }[] {
  let list;
  try {
    list = parseList(value);
  } catch (error) {
    const why = error instanceof ParseError || error instanceof Error ? error.message : String(error);
    throw new RateLimitFieldError(field, `not an RFC 9651 List (${why})`);
  }
  if (list.length === 0) throw new RateLimitFieldError(field, 'an empty List; the draft wants at least one member');
  return list.map((member, index) => {
    const [bare, params] = member;
    if (Array.isArray(bare)) throw new RateLimitFieldError(field, `member ${index + 1} is an Inner List; each member must be an Item`);
    if (typeof bare !== 'string') {
      const kind = bare instanceof Token ? `the Token ${bare.toString()}` : `a ${typeof bare}`;
      throw new RateLimitFieldError(field, `member ${index + 1} is ${kind}; the policy name must be a String (quoted)`);
    }
    return { name: bare, params: params as Map<string, unknown> };
  });
}

function integerParam(field: string, item: { name: string; params: Map<string, unknown> }, key: string, required: boolean, positive = false): number | undefined {
  const value = item.params.get(key);
  if (value === undefined) {
    if (required) throw new RateLimitFieldError(field, `"${item.name}" has no ${key} parameter; it is required`);
    return undefined;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < (positive ? 1 : 0)) {
    throw new RateLimitFieldError(field, `"${item.name}";${key} must be a ${positive ? 'positive' : 'non-negative'} Integer, got ${String(value)}`);
  }
  return value;
}

/** Reads a RateLimit-Policy value (repeated lines joined with ", "); throws RateLimitFieldError. */
export function parseRateLimitPolicy(value: string): QuotaPolicy[] {
  const field = RATE_LIMIT_POLICY_HEADER;
  return items(field, value).map((item) => {
    const quota = integerParam(field, item, 'q', true)!;
    const windowSeconds = integerParam(field, item, 'w', false, true);
    return windowSeconds === undefined ? { name: item.name, quota } : { name: item.name, quota, windowSeconds };
  });
}

/** Reads a RateLimit value (repeated lines joined with ", "); throws RateLimitFieldError. */
export function parseRateLimit(value: string): ServiceLimit[] {
  const field = RATE_LIMIT_HEADER;
  return items(field, value).map((item) => {
    const remaining = integerParam(field, item, 'r', true)!;
    const resetSeconds = integerParam(field, item, 't', false);
    return resetSeconds === undefined ? { name: item.name, remaining } : { name: item.name, remaining, resetSeconds };
  });
}

/** The source's three figures of the active window (RL-HEADERS). */
export interface RateLimitTrio {
  limit: number;
  remaining: number;
  reset: number;
}

/**
 * Why the structured fields disagree with the trio, or null when they agree: some member
 * of RateLimit has the trio's Remaining and Reset, and the policy it names has the trio's
 * Limit as its quota; every member of RateLimit names a policy of RateLimit-Policy, and
 * leaves no more than that policy's quota, in no longer than its window.
 */
export function structuredFieldsDisagree(policies: readonly QuotaPolicy[], limits: readonly ServiceLimit[], trio: RateLimitTrio): string | null {
  const byName = new Map(policies.map((p) => [p.name, p]));
  for (const limit of limits) {
    const policy = byName.get(limit.name);
    if (!policy) return `RateLimit names "${limit.name}", which RateLimit-Policy does not list`;
    if (limit.remaining > policy.quota) return `RateLimit leaves r=${limit.remaining} of "${limit.name}", more than its quota q=${policy.quota}`;
    if (limit.resetSeconds !== undefined && policy.windowSeconds !== undefined && limit.resetSeconds > policy.windowSeconds) {
      return `RateLimit resets "${limit.name}" in t=${limit.resetSeconds} s, longer than its window w=${policy.windowSeconds}`;
    }
  }
  const matching = limits.some((l) => l.remaining === trio.remaining && l.resetSeconds === trio.reset && byName.get(l.name)?.quota === trio.limit);
  return matching
    ? null
    : `no member of RateLimit says r=${trio.remaining};t=${trio.reset} of a policy with q=${trio.limit}, as RateLimit-Limit, -Remaining and -Reset do`;
}
