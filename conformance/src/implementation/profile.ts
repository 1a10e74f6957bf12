// The implementation profile: how the implementation under test decided each item the
// source leaves "not shown" that the runner depends on (request shapes, success
// statuses, where the ID, the state and an error's code are, what /v1/me shows, the
// event envelope, prices, the failure trigger). It is the one place the runner learns
// an implementation's shape; checks read records, answers and events through it and
// never through this project's own choices. The default profile is this project's
// contract (openapi/README.md), so a run without a profile file judges it as before.
import { CREDIT_COSTS, FILE_LINKS, WEBHOOK_DELIVERY } from '../../../contract/numbers.ts';
import type { RateLimitDraftRevision } from '../../../contract/rateLimitFields.ts';
import { SANDBOX_FAILURE_MARKER } from '../../../contract/sandbox.ts';
import { WEBHOOK_EVENT_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_SIGNATURE_PREFIX, WEBHOOK_TIMESTAMP_HEADER } from '../../../contract/webhookSignature.ts';
import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import jsonpointer from 'jsonpointer';
import { parse as parseYaml } from 'yaml';

export type Json = Record<string, unknown>;
export type JobKind = 'avatar' | 'avatar_video';
/** How a rate-limit window counts: it opens and closes (fixed), or it is always the last window's length (sliding). */
export type RateLimitWindow = 'fixed' | 'sliding';
/**
 * Structured rate-limit fields an implementation may claim beyond the source's trio: a
 * revision of the IETF draft (contract/rateLimitFields.ts's, which write them alike).
 */
export type RateLimitFields = `ietf-draft-${RateLimitDraftRevision}`;
export type BalanceMember = 'available' | 'reserved' | 'used';
export const BALANCE_MEMBERS: readonly BalanceMember[] = ['available', 'reserved', 'used'];

/**
 * Where an error answer carries its code: in a body member (a JSON Pointer) or a
 * header, either as the code itself (`value`) or as the last segment of a URI (`uri`:
 * RFC 9457's `type`, e.g. https://errors.example/insufficient_credits).
 */
export type CodeLocation = ({ pointer: string } | { header: string }) & { form: 'value' | 'uri' };

export interface ImplementationProfile {
  /** Shown in reports: "this project's API (the default)" for the default. */
  name: string;
  /** True when this is the default: this project's contract. */
  isContract: boolean;
  auth: { header: string; scheme: string | null };
  create: {
    avatar: { statuses: number[]; id: string; extra: Json };
    video: { statuses: number[]; id: string; body: Json };
  };
  records: {
    status: string;
    states: { pending: string[]; ready: string; failed: string };
    credits: string | null;
  };
  /** Where an error carries its code; null: anywhere in the body, as a whole word. */
  errors: { code: CodeLocation | null; validation: number[] };
  account: {
    id: string | null;
    /** Pointers to the balances GET /v1/me shows, each only where it shows it; null: none. */
    credits: Partial<Record<BalanceMember, string>> | null;
    generationWindows: { limit: string; remaining: string; reset: string }[];
    /**
     * Where GET /v1/me says whether the key is live or sandbox (a value containing "live"
     * is live: its jobs are billed); null: it does not say.
     */
    mode: string | null;
  };
  events: { type: { pointer: string } | { header: string } };
  prices: Record<JobKind, number> | null;
  failure: { avatar: Json; video: Json } | null;
  /**
   * How a sandbox key moves its own account's time forward, if the implementation lets
   * it: the request, whose body uses {{seconds}}.
   */
  clock: { advance: { method: 'POST' | 'PUT' | 'PATCH'; path: string; body: Json } } | null;
  /**
   * The waits before each webhook retry, in seconds, and their relative jitter, if the
   * implementation documents them (ND-DELIVERY); null: not stated.
   */
  retries: { delaysSeconds: number[]; jitter: number } | null;
  /**
   * How the implementation counts its rate-limit windows (null: not stated, so every
   * rate-limit check must conclude under fixed and sliding windows alike), and the
   * structured rate-limit fields beyond the source's trio it claims to send (null: none
   * claimed, and whatever such fields it sends are not judged outside the contract).
   */
  rateLimits: { window: RateLimitWindow | null; fields: RateLimitFields | null };
  /**
   * How long the implementation takes, in seconds, where it states it: a job of each kind
   * at most, from its create answer to ready or failed, and a webhook attempt at most
   * after it is due (its job's end, its retry's moment, an accepted replay). The run's
   * bound and the waits of its checks are made from them; null: not stated, and the
   * runner allows what any service might take (UNSTATED_TIMINGS).
   */
  timings: Timings | null;
  /**
   * Idempotency keys on the creates, if the implementation has them: the request header,
   * the response header that marks a replay (null: none), and the statuses that refuse a
   * key sent again with another body.
   */
  idempotency: { header: string; replayedHeader: string | null; reused: number[] } | null;
  /**
   * Lists of the account's avatars and videos, if the implementation has them, at the
   * source's paths: the query parameters that take the page size and the cursor, and
   * pointers to the records and to the next cursor (absent or null on the last page).
   */
  lists: { limit: string; cursor: string; data: string; next: string } | null;
  /**
   * A delivery log of webhook events with a replay, if the implementation has them: the
   * path of one event and of its replay (each with {id}, the event ID), the statuses that
   * accept a replay, and pointers into the event to its attempts and, in an attempt, to
   * the receiver's status, to whether it succeeded and to why it was made (null: not shown).
   */
  webhookLog: {
    event: string;
    replay: string;
    replayStatuses: number[];
    attempts: string;
    statusCode: string;
    succeeded: string;
    trigger: { pointer: string; replay: string } | null;
  } | null;
  /**
   * How the implementation sends a webhook, for the receivers written for it: its header
   * names, its signature prefix, and its envelope (a template; null: the contract's
   * envelope for the contract, {id, data: {object}} for another implementation).
   */
  webhookFormat: {
    headers: { eventId: string; timestamp: string; signature: string };
    signaturePrefix: string;
    envelope: Json | null;
  };
  /**
   * The files records link to, which the runner downloads and judges: pointers into the
   * video record to its MP4 (the source's video_url), to its length in seconds and to its
   * captions (WebVTT), and into the avatar record to its preview (PNG or JPEG), each null
   * where records have none; and whether the links answer byte ranges (true: a Range
   * request is answered 206; false: not claimed, so a whole file (200) is taken too).
   */
  files: FileMembers;
}

export interface FileMembers {
  video: string;
  duration: string | null;
  captions: string | null;
  preview: string | null;
  ranges: boolean;
  /**
   * How long a file link a read of a record gives stays valid, in seconds of the account's
   * time, where the implementation states it (ND-FILE-LINKS); null: links not claimed to expire.
   */
  linkLifetimeSeconds: number | null;
}

/** Where another implementation's records link to files when its profile says nothing: the source's video_url alone. */
export const SOURCE_FILES: FileMembers = { video: '/video_url', duration: null, captions: null, preview: null, ranges: false, linkLifetimeSeconds: null };

export interface Timings {
  jobSeconds: Record<JobKind, number>;
  deliverySeconds: number;
}

/**
 * What the runner allows an implementation whose profile states no timings: five minutes
 * a job and a minute a delivery, long enough for a slow service, so that the bound
 * promises little (a profile's `timings` is what makes it one worth planning on).
 */
export const UNSTATED_TIMINGS: Timings = { jobSeconds: { avatar: 300, avatar_video: 300 }, deliverySeconds: 60 };

/** The placeholders each template may use; a request fills them with its own values. */
export const PLACEHOLDERS = {
  'create.video.body': ['avatar_id', 'script', 'webhook_url'],
  'failure.avatar': ['name', 'prompt'],
  'failure.video': ['avatar_id', 'script'],
  'clock.advance.body': ['seconds'],
  'webhook_format.envelope': ['id', 'type', 'object', 'created', 'created_unix'],
} as const;

/** The contract's sandbox failure trigger (ND-SANDBOX-FAILURE). */
export const CONTRACT_FAIL_MARKER = SANDBOX_FAILURE_MARKER;

export const CONTRACT_PROFILE: ImplementationProfile = {
  // Not "contract": a core run reads through it too, and must not read as a contract run.
  name: "this project's API (the default)",
  isContract: true,
  auth: { header: 'Authorization', scheme: 'Bearer' },
  create: {
    avatar: { statuses: [202], id: '/id', extra: {} },
    video: { statuses: [202], id: '/id', body: { avatar_id: '{{avatar_id}}', script: '{{script}}' } },
  },
  records: { status: '/status', states: { pending: ['queued', 'processing'], ready: 'ready', failed: 'failed' }, credits: '/credits' },
  errors: { code: { pointer: '/code', form: 'value' }, validation: [400, 422] },
  account: {
    id: '/account_id',
    credits: { available: '/credits/available', reserved: '/credits/reserved', used: '/credits/used' },
    generationWindows: [
      { limit: '/rate_limits/generation/minute/limit', remaining: '/rate_limits/generation/minute/remaining', reset: '/rate_limits/generation/minute/reset' },
      { limit: '/rate_limits/generation/day/limit', remaining: '/rate_limits/generation/day/remaining', reset: '/rate_limits/generation/day/reset' },
    ],
    mode: '/key/mode',
  },
  events: { type: { pointer: '/type' } },
  // The contract's numbers (x-credit-cost, info.x-webhook-delivery), never restated here.
  prices: { ...CREDIT_COSTS },
  failure: { avatar: { name: `{{name}} ${CONTRACT_FAIL_MARKER}` }, video: { script: `{{script}} ${CONTRACT_FAIL_MARKER}` } },
  clock: {
    advance: { method: 'POST', path: '/v1/test_helpers/clock/advance', body: { seconds: '{{seconds}}' } },
  },
  retries: { delaysSeconds: [...WEBHOOK_DELIVERY.retryDelaysSeconds], jitter: WEBHOOK_DELIVERY.jitter },
  // Fixed windows aligned on UTC minutes and days, and the draft's fields (ND-RATELIMIT-FIELDS).
  rateLimits: { window: 'fixed', fields: 'ietf-draft-11' },
  // This project's server: its engine's avatar takes 1.5 s and its video 3 s with the
  // render beside it (ENGINE_AVATAR_MS, ENGINE_VIDEO_MS), an account's videos rendered one
  // after another; measured from create answer to the read that saw them end, avatars
  // took 1.5-2.4 s idle and with both cores busy (a timer, which load barely stretches),
  // videos 3.0-4.5 s idle and 10-19 s busy, once over 25 s (the render is CPU; the second
  // video waits for the first's). Its dispatcher looks for due deliveries every second
  // (WEBHOOK_POLL_MS), and retries came 0.9 s after the clock made them due.
  timings: { jobSeconds: { avatar: 4, avatar_video: 30 }, deliverySeconds: 2 },
  idempotency: { header: 'Idempotency-Key', replayedHeader: 'Idempotent-Replayed', reused: [409] },
  lists: { limit: 'limit', cursor: 'cursor', data: '/data', next: '/next_cursor' },
  webhookLog: {
    event: '/v1/webhook-events/{id}',
    replay: '/v1/webhook-events/{id}/replay',
    replayStatuses: [202],
    attempts: '/attempts',
    statusCode: '/status_code',
    succeeded: '/succeeded',
    trigger: { pointer: '/trigger', replay: 'replay' },
  },
  webhookFormat: {
    headers: { eventId: WEBHOOK_EVENT_ID_HEADER, timestamp: WEBHOOK_TIMESTAMP_HEADER, signature: WEBHOOK_SIGNATURE_HEADER },
    signaturePrefix: WEBHOOK_SIGNATURE_PREFIX,
    envelope: null,
  },
  // The contract's AvatarVideo and Avatar members; its downloads answer byte ranges, and its links expire (x-file-links).
  files: { video: '/video_url', duration: '/duration_seconds', captions: '/captions_url', preview: '/preview_image_url', ranges: true, linkLifetimeSeconds: FILE_LINKS.lifetimeSeconds },
};

/** A profile file that cannot be used: every message names the member and the rule. */
export class ProfileError extends Error {
  override name = 'ProfileError';
  readonly problems: string[];
  constructor(file: string, problems: string[]) {
    super(`${file} is not a valid implementation profile: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

export const PROFILE_SCHEMA_PATH = new URL('./profile.schema.json', import.meta.url);

let validator: ReturnType<Ajv2020['compile']> | undefined;
function validate(value: unknown): ErrorObject[] {
  if (!validator) {
    const schema = JSON.parse(readFileSync(PROFILE_SCHEMA_PATH, 'utf8')) as Json;
    // Union types: a member such as errors.code is a pointer, an object or null, and one
    // `type` keyword names all three in one error instead of a oneOf's three.
    validator = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema);
  }
  return validator(value) ? [] : [...(validator.errors ?? [])];
}

/** Reads a profile file (YAML or JSON), validates it and fills in the contract's defaults. */
export function loadProfile(file: string): ImplementationProfile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ProfileError(file, [`cannot be read (${error instanceof Error ? error.message : String(error)})`]);
  }
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    throw new ProfileError(file, [`is neither YAML nor JSON (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`]);
  }
  return parseProfile(value, file);
}

/** Validates an already parsed profile and fills in the contract's defaults. */
export function parseProfile(value: unknown, file = 'the profile'): ImplementationProfile {
  const errors = validate(value);
  if (errors.length > 0) throw new ProfileError(file, describeErrors(errors));
  const raw = value as RawProfile;
  const base = CONTRACT_PROFILE;
  const profile: ImplementationProfile = {
    name: raw.name ?? file,
    isContract: false,
    auth: { header: raw.auth?.header ?? base.auth.header, scheme: raw.auth?.scheme === undefined ? base.auth.scheme : raw.auth.scheme },
    create: {
      avatar: {
        statuses: raw.create?.avatar?.statuses ?? base.create.avatar.statuses,
        id: raw.create?.avatar?.id ?? base.create.avatar.id,
        extra: raw.create?.avatar?.extra ?? {},
      },
      video: {
        statuses: raw.create?.video?.statuses ?? base.create.video.statuses,
        id: raw.create?.video?.id ?? base.create.video.id,
        body: raw.create?.video?.body ?? base.create.video.body,
      },
    },
    records: {
      status: raw.records?.status ?? base.records.status,
      states: { ...base.records.states, ...raw.records?.states },
      credits: raw.records?.credits === undefined ? base.records.credits : raw.records.credits,
    },
    errors: {
      code: raw.errors?.code === undefined ? base.errors.code : codeLocationOf(raw.errors.code),
      validation: raw.errors?.validation ?? base.errors.validation,
    },
    account: {
      id: raw.account?.id === undefined ? base.account.id : raw.account.id,
      credits: raw.account?.credits === undefined ? base.account.credits : raw.account.credits,
      generationWindows: raw.account?.generation_windows ?? base.account.generationWindows,
      mode: raw.account?.mode === undefined ? base.account.mode : raw.account.mode,
    },
    events: { type: raw.events?.type === undefined ? base.events.type : typeof raw.events.type === 'string' ? { pointer: raw.events.type } : raw.events.type },
    prices: raw.prices === undefined ? base.prices : raw.prices,
    failure: raw.failure === undefined ? base.failure : raw.failure,
    // Not the contract's: a clock and a retry schedule exist only where the profile says so.
    clock: raw.clock ? { advance: { method: raw.clock.advance.method ?? 'POST', path: raw.clock.advance.path, body: raw.clock.advance.body } } : null,
    retries: raw.webhook_retries ? { delaysSeconds: raw.webhook_retries.delays_seconds, jitter: raw.webhook_retries.jitter ?? 0 } : null,
    // Nothing of the contract's: another implementation claims a window kind or fields only by saying so.
    rateLimits: { window: raw.rate_limits?.window ?? null, fields: raw.rate_limits?.fields ?? null },
    // Not the contract's: another implementation's speed is its own to state.
    timings: raw.timings ? { jobSeconds: { avatar: raw.timings.avatar, avatar_video: raw.timings.avatar_video }, deliverySeconds: raw.timings.delivery } : null,
    idempotency: raw.idempotency ? { header: raw.idempotency.header, replayedHeader: raw.idempotency.replayed_header ?? null, reused: raw.idempotency.reused ?? [400, 409, 422] } : null,
    lists: raw.lists ? { limit: raw.lists.limit ?? 'limit', cursor: raw.lists.cursor ?? 'cursor', data: raw.lists.data ?? '/data', next: raw.lists.next } : null,
    webhookLog: raw.webhook_log ? webhookLogOf(raw.webhook_log) : null,
    webhookFormat: {
      headers: {
        eventId: raw.webhook_format?.headers?.event_id ?? base.webhookFormat.headers.eventId,
        timestamp: raw.webhook_format?.headers?.timestamp ?? base.webhookFormat.headers.timestamp,
        signature: raw.webhook_format?.headers?.signature ?? base.webhookFormat.headers.signature,
      },
      signaturePrefix: raw.webhook_format?.signature_prefix ?? base.webhookFormat.signaturePrefix,
      envelope: raw.webhook_format?.envelope ?? null,
    },
    // Not the contract's: another implementation's records link to more than the source's video_url only by saying so.
    files: {
      video: raw.files?.video ?? SOURCE_FILES.video,
      duration: raw.files?.duration ?? SOURCE_FILES.duration,
      captions: raw.files?.captions ?? SOURCE_FILES.captions,
      preview: raw.files?.preview ?? SOURCE_FILES.preview,
      ranges: raw.files?.ranges ?? SOURCE_FILES.ranges,
      linkLifetimeSeconds: raw.files?.link_lifetime_seconds ?? SOURCE_FILES.linkLifetimeSeconds,
    },
  };
  const problems = placeholderProblems(profile);
  const code = raw.errors?.code;
  if (isPlainObject(code) && ('pointer' in code) === ('header' in code)) {
    problems.push(`errors.code: ${'pointer' in code ? 'give pointer or header, not both' : 'give pointer (a member of the body) or header'}: where the code is (one location)`);
  }
  const { states } = profile.records;
  if (states.pending.includes(states.ready) || states.pending.includes(states.failed) || states.ready === states.failed) {
    problems.push('records.states: ready, failed and the pending states must all be different names (distinct)');
  }
  if (profile.webhookLog) {
    for (const member of ['event', 'replay'] as const) {
      if (!profile.webhookLog[member].includes('{id}')) problems.push(`webhook_log.${member}: must hold {id}, where the event ID goes (placeholder)`);
    }
  }
  if (problems.length > 0) throw new ProfileError(file, problems);
  return profile;
}

interface RawProfile {
  profile: 1;
  name?: string;
  auth?: { header?: string; scheme?: string | null };
  create?: {
    avatar?: { statuses?: number[]; id?: string; extra?: Json };
    video?: { statuses?: number[]; id?: string; body?: Json };
  };
  records?: { status?: string; states?: Partial<ImplementationProfile['records']['states']>; credits?: string | null };
  errors?: { code?: RawCodeLocation; validation?: number[] };
  account?: { id?: string | null; credits?: ImplementationProfile['account']['credits']; generation_windows?: ImplementationProfile['account']['generationWindows']; mode?: string | null };
  events?: { type?: string | { header: string } };
  prices?: ImplementationProfile['prices'];
  failure?: ImplementationProfile['failure'];
  clock?: { advance: { method?: 'POST' | 'PUT' | 'PATCH'; path: string; body: Json } } | null;
  webhook_retries?: { delays_seconds: number[]; jitter?: number } | null;
  rate_limits?: { window?: RateLimitWindow | null; fields?: RateLimitFields | null };
  timings?: { avatar: number; avatar_video: number; delivery: number } | null;
  idempotency?: { header: string; replayed_header?: string | null; reused?: number[] } | null;
  lists?: { limit?: string; cursor?: string; data?: string; next: string } | null;
  webhook_log?: RawWebhookLog | null;
  webhook_format?: { headers?: { event_id?: string; timestamp?: string; signature?: string }; signature_prefix?: string; envelope?: Json };
  files?: { video?: string; duration?: string | null; captions?: string | null; preview?: string | null; ranges?: boolean; link_lifetime_seconds?: number | null };
}

type RawCodeLocation = string | null | { pointer?: string; header?: string; form?: 'value' | 'uri' };

/** A pointer alone is a member holding the code itself. */
function codeLocationOf(raw: RawCodeLocation): CodeLocation | null {
  if (raw === null) return null;
  if (typeof raw === 'string') return { pointer: raw, form: 'value' };
  const form = raw.form ?? 'value';
  // Exactly one of the two is there: parseProfile reports the file otherwise.
  return raw.header !== undefined ? { header: raw.header, form } : { pointer: raw.pointer ?? '', form };
}

interface RawWebhookLog {
  event: string;
  replay: string;
  replay_statuses?: number[];
  attempts?: string;
  status_code?: string;
  succeeded?: string;
  trigger?: { pointer: string; replay: string } | null;
}

/** The delivery log as the file states it, the contract's pointers where it says nothing. */
function webhookLogOf(raw: RawWebhookLog): NonNullable<ImplementationProfile['webhookLog']> {
  const base = CONTRACT_PROFILE.webhookLog!;
  return {
    event: raw.event,
    replay: raw.replay,
    replayStatuses: raw.replay_statuses ?? [200, 201, 202, 204],
    attempts: raw.attempts ?? base.attempts,
    statusCode: raw.status_code ?? base.statusCode,
    succeeded: raw.succeeded ?? base.succeeded,
    trigger: raw.trigger === undefined ? base.trigger : raw.trigger,
  };
}

/** "member: message (rule)", one per broken rule, without the noise of oneOf's other branches. */
function describeErrors(errors: ErrorObject[]): string[] {
  const member = (error: ErrorObject) => {
    const path = error.instancePath
      .split('/')
      .slice(1)
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((out, part) => (/^\d+$/.test(part) ? `${out}[${part}]` : out ? `${out}.${part}` : part), '');
    const extra = error.keyword === 'additionalProperties' ? (error.params as { additionalProperty: string }).additionalProperty : error.keyword === 'required' ? (error.params as { missingProperty: string }).missingProperty : undefined;
    return [path, extra].filter(Boolean).join('.') || '(the file)';
  };
  const specific = errors.filter((error) => error.keyword !== 'oneOf' && error.keyword !== 'if' && !(error.keyword === 'type' && (error.params as { type?: unknown }).type === 'null'));
  const chosen = specific.length > 0 ? specific : errors;
  const lines = chosen.map((error) => {
    const rule = error.keyword === 'additionalProperties' ? 'is not a member of the profile format' : error.keyword === 'required' ? 'is required' : error.message ?? 'is invalid';
    return `${member(error)}: ${rule} (${error.keyword})`;
  });
  return [...new Set(lines)];
}

function placeholderProblems(profile: ImplementationProfile): string[] {
  const problems: string[] = [];
  const templates: [keyof typeof PLACEHOLDERS, Json | undefined][] = [
    ['create.video.body', profile.create.video.body],
    ['failure.avatar', profile.failure?.avatar],
    ['failure.video', profile.failure?.video],
    ['clock.advance.body', profile.clock?.advance.body],
    ['webhook_format.envelope', profile.webhookFormat.envelope ?? undefined],
  ];
  for (const [where, template] of templates) {
    if (!template) continue;
    const allowed: readonly string[] = PLACEHOLDERS[where];
    for (const name of placeholdersIn(template)) {
      if (!allowed.includes(name)) problems.push(`${where}: {{${name}}} is not a placeholder here; use ${allowed.map((p) => `{{${p}}}`).join(', ')} (placeholder)`);
    }
  }
  if (profile.clock && !placeholdersIn(profile.clock.advance.body).includes('seconds')) problems.push('clock.advance.body: must use {{seconds}} somewhere, or the runner cannot say how far to move (placeholder)');
  if (!placeholdersIn(profile.create.video.body).includes('avatar_id')) problems.push('create.video.body: must use {{avatar_id}} somewhere, or no video can name its avatar (placeholder)');
  return problems;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z_]+)\s*\}\}/g;

function placeholdersIn(value: unknown): string[] {
  if (typeof value === 'string') return [...value.matchAll(PLACEHOLDER)].map((match) => match[1]!);
  if (Array.isArray(value)) return value.flatMap(placeholdersIn);
  if (value && typeof value === 'object') return Object.values(value).flatMap(placeholdersIn);
  return [];
}

/**
 * Fills a template. A string that is only one placeholder becomes the value itself (of
 * any type), and its member is left out when the value is undefined; placeholders in a
 * longer string are replaced by their text.
 */
export function render(template: unknown, values: Record<string, unknown>): unknown {
  if (typeof template === 'string') {
    const whole = /^\{\{\s*([A-Za-z_]+)\s*\}\}$/.exec(template);
    if (whole) return values[whole[1]!];
    return template.replace(PLACEHOLDER, (_, name: string) => (values[name] === undefined ? '' : String(values[name])));
  }
  if (Array.isArray(template)) return template.map((item) => render(item, values)).filter((item) => item !== undefined);
  if (template && typeof template === 'object') {
    const out: Json = {};
    for (const [member, value] of Object.entries(template)) {
      const filled = render(value, values);
      if (filled !== undefined) out[member] = filled;
    }
    return out;
  }
  return template;
}

export function usesPlaceholder(template: unknown, name: string): boolean {
  return placeholdersIn(template).includes(name);
}

/** The value at a JSON Pointer, or undefined where there is none. */
export function at(value: unknown, pointer: string): unknown {
  if (pointer === '') return value;
  if (value === null || typeof value !== 'object') return undefined;
  try {
    return jsonpointer.get(value as object, pointer);
  } catch {
    return undefined;
  }
}

/** Deep merge of plain objects: `over` wins, nested objects merge. */
export function merge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [member, value] of Object.entries(over)) {
    const current = out[member];
    out[member] = isPlainObject(current) && isPlainObject(value) ? merge(current, value) : value;
  }
  return out;
}

function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
