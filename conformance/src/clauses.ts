// The runner's own registry of the clause IDs of the service interface, so that it
// never reads ../shared at run time. The IDs and section numbers are the catalogue's;
// each rule is restated in this project's words. `observe` says who can see the rule:
// B = a black-box client over HTTP (this runner), W = only the server's own tests,
// C = clients and receivers (client/ implements it and client/test proves it);
// R = a webhook receiver over HTTP, judged by the runner's receiver mode, which plays
// the sender (its checks are in receiver-checks/ and name these clauses); P = a client
// over HTTP, judged from its live traffic by the runner's proxy mode, which stands
// between it and a service (its client checks are in proxy/checks/ and name these).
import { bucketLimitsText, CREDIT_COSTS, formatNumber, WEBHOOK_DELIVERY } from '../../contract/numbers.ts';

export type Observe = 'B' | 'W' | 'C' | 'R' | 'P';

export interface Clause {
  id: string;
  sections: string;
  observe: readonly Observe[];
  rule: string;
  /** For C clauses: where the client proves it. */
  provenBy?: string;
}

export const CLAUSES = [
  // Avatars and jobs
  { id: 'AV-TYPES', sections: '1.1, 2.1', observe: ['B'], rule: 'type must be prompt, photo or props; anything else is refused.' },
  { id: 'AV-NAME', sections: '2.1', observe: ['B'], rule: 'Every avatar request needs a name, whatever its type.' },
  { id: 'AV-PROMPT', sections: '2.1, 4.1.1', observe: ['B'], rule: 'A prompt avatar needs prompt.' },
  { id: 'AV-PHOTO', sections: '2.1, 4.1.1', observe: ['B'], rule: 'A photo avatar needs file, an object with type "url" and a url.' },
  { id: 'AV-PROPS', sections: '2.1, 4.1.1', observe: ['B'], rule: 'A props avatar needs ethnicity (one of eight values), sex (male or female) and an integer age.' },
  { id: 'AV-AGE', sections: '2.1, 8.3', observe: ['B'], rule: 'age is an integer no lower than 20.' },
  { id: 'AV-ASYNC', sections: '1.2, 4', observe: ['B'], rule: 'Creating an avatar answers with its ID at once, before generation is done.' },
  { id: 'AV-GET', sections: '2.2, 4', observe: ['B'], rule: 'GET /v1/avatars/{id} answers the avatar record, which has id.' },
  { id: 'AV-FAILED-ERROR', sections: '2.2', observe: ['B'], rule: 'An avatar that failed has an error object.' },
  { id: 'AV-READY-BEFORE-VIDEO', sections: '4.1.6', observe: ['B', 'P'], rule: 'Only a ready avatar can be used to make a video: the service refuses another, and a client asks only with one it has seen ready.' },
  { id: 'VID-GET', sections: '2.3, 4', observe: ['B'], rule: 'GET /v1/avatar-videos/{id} answers the video record, which has id.' },
  { id: 'VID-READY-URL', sections: '2.3, 3', observe: ['B'], rule: 'A ready video has video_url, and the video is available there: a GET of it gives the MP4.' },
  { id: 'VID-FAILED-ERROR', sections: '2.3', observe: ['B'], rule: 'A video that failed has an error object.' },
  { id: 'ST-TERMINAL', sections: '3', observe: ['B'], rule: 'ready and failed are final: a record in either state never changes state again.' },
  { id: 'ST-POLL-TRUTH', sections: '1.3, 6.5.4', observe: ['B'], rule: 'Polling always works and tells the final state, webhook or not.' },
  { id: 'VER-PREFIX', sections: '9.1', observe: ['B'], rule: 'All endpoints live under /v1.' },
  // Credits
  { id: 'CR-RESERVE', sections: '1.4, 4.1.3', observe: ['W', 'B'], rule: 'A generation job holds its credits from the moment it is accepted (visible in /v1/me).' },
  { id: 'CR-402', sections: '4.1.3, 7', observe: ['B'], rule: 'Without enough credits a generation request gets 402 insufficient_credits.' },
  { id: 'CR-402-NO-JOB', sections: '4.1.3, 7', observe: ['B', 'W'], rule: 'A 402 starts nothing and charges nothing.' },
  { id: 'CR-ACCOUNT', sections: '1.5, 5.2', observe: ['W', 'B'], rule: "Jobs are paid from the key's own workspace or owner account." },
  { id: 'CR-READ-FREE', sections: '1.6, 8.2', observe: ['B', 'W'], rule: 'Reading never costs credits.' },
  // The catalogue numbers no clause for this sentence of the source (1.4, 8.4: "Credits are
  // the monthly generation quota"); the runner names it so that a check can prove it.
  { id: 'CR-MONTHLY-QUOTA', sections: '1.4, 8.4', observe: ['W', 'B'], rule: 'Credits are a monthly quota: a new month starts with the whole quota again (B with a sandbox clock).' },
  { id: 'CR-WEBHOOK-INDEPENDENT', sections: '3, 6.5.5', observe: ['W', 'B'], rule: 'Failing webhook deliveries change neither the job state nor what is charged or refunded.' },
  // Rate limits
  { id: 'RL-PER-KEY', sections: '5.1, 8', observe: ['B'], rule: 'Each API key has its own limits; one key running out leaves the others alone.' },
  { id: 'RL-BUCKETS', sections: '8', observe: ['B', 'W'], rule: `Reads (GET /v1/me and the two record GETs) share a ${bucketLimitsText('read')} bucket; the two POSTs share a ${bucketLimitsText('generation')} bucket.` },
  { id: 'RL-BOTH-CHECKS', sections: '4.1.2, 8.1', observe: ['B', 'W'], rule: 'A generation request is accepted only if it is within the rate limit and the credits cover it.' },
  { id: 'RL-429', sections: '4.1.4, 7', observe: ['B'], rule: 'Beyond the limit the answer is 429 rate_limit_exceeded with Retry-After in seconds.' },
  { id: 'RL-HEADERS', sections: '8.1', observe: ['B'], rule: 'Successes and 429s carry RateLimit-Limit, -Remaining and -Reset for the active window.' },
  { id: 'RL-HEADERS-COMPAT', sections: '8.1', observe: ['B'], rule: 'X-RateLimit-Limit, -Remaining and -Reset repeat the RateLimit-* values.' },
  { id: 'RL-RETRY-AFTER-ONLY-429', sections: '8.1', observe: ['B'], rule: 'Retry-After appears on 429 answers and not on successes.' },
  { id: 'RL-CLIENT-WAIT', sections: '7', observe: ['C', 'P'], rule: 'A client waits at least Retry-After before trying again.', provenBy: 'client/test/client.test.ts' },
  { id: 'RL-CLIENT-BACKOFF', sections: '4.1.6', observe: ['C', 'P'], rule: 'A polling client backs off instead of looping tightly.', provenBy: 'client/test/client.test.ts' },
  // Webhooks
  { id: 'WH-OPTIONAL', sections: '1.3, 6', observe: ['B'], rule: 'Webhooks are opt-in per request, through webhook_url on either POST.' },
  { id: 'WH-HTTPS-PUBLIC', sections: '2.1, 4.1.5', observe: ['B', 'W'], rule: 'In production a webhook_url must be https:// on a public host.' },
  { id: 'WH-TERMINAL', sections: '6, 6.5.1', observe: ['B'], rule: 'Reaching ready or failed sends one event whose type names the resource and the state.' },
  { id: 'WH-PAYLOAD-SHAPE', sections: '6.2.1', observe: ['B'], rule: 'The event carries a top-level id and, at data.object, the record as its GET shows it.' },
  { id: 'WH-EVENT-ID', sections: '6.3', observe: ['B'], rule: 'X-Service-Event-Id stays the same for every copy of one event.' },
  { id: 'WH-TIMESTAMP', sections: '6.3', observe: ['B'], rule: 'X-Service-Timestamp is Unix time in seconds.' },
  { id: 'WH-SIGNATURE', sections: '5.4, 6.3, 6.4', observe: ['B'], rule: 'X-Service-Signature is v1= and the hex HMAC-SHA256, keyed by the signing secret, of timestamp, dot, raw body.' },
  { id: 'WH-RECEIVER-VERIFY', sections: '6.4.3', observe: ['C', 'R'], rule: 'Receivers check the signature over the raw body and refuse stale timestamps.', provenBy: 'client/test/verify.test.ts' },
  { id: 'WH-RETRY', sections: '6.5.2', observe: ['B', 'W'], rule: 'A failed delivery is retried a few times with growing waits, each attempt time-bounded.' },
  { id: 'WH-DUPLICATES', sections: '6.5.3', observe: ['C', 'R'], rule: 'Receivers remember processed event IDs and answer 2xx to repeats.', provenBy: 'client/test/receiver.test.ts' },
  { id: 'WH-ORDER', sections: '6.2.3', observe: ['C', 'R'], rule: 'Receivers cope with any order across jobs, keyed by id and data.object.id.', provenBy: 'client/test/receiver.test.ts' },
  { id: 'WH-GIVE-UP', sections: '6.5.4', observe: ['B', 'W'], rule: 'When deliveries keep failing, polling still gives the final state.' },
  // Authentication and versioning
  { id: 'AUTH-KEY', sections: '5.1', observe: ['B'], rule: 'Every request needs a valid API key.' },
  { id: 'AUTH-ACCOUNT', sections: '5.2', observe: ['W', 'B'], rule: 'A key belongs to one workspace or owner account, and sees and pays for that account only.' },
  { id: 'AUTH-SIGNING-SECRET', sections: '5.4', observe: ['B'], rule: "Webhooks are signed with the integration's signing secret." },
] as const satisfies readonly Clause[];

export type ClauseId = (typeof CLAUSES)[number]['id'];

/** The contract's decisions where the source says "not shown": the contract profile. */
export const DECISIONS = [
  { id: 'ND-STATES', rule: 'status moves queued -> processing -> ready | failed, or queued -> failed.' },
  { id: 'ND-IDEMPOTENCY', rule: 'A create repeated with the same Idempotency-Key and body answers the first 202 again (Idempotent-Replayed: true) and creates and charges nothing; with another body it is 409 idempotency_key_reused.' },
  { id: 'ND-WEBHOOK-LOG', rule: 'GET /v1/webhook-events/{id} shows every delivery attempt of the account\'s event (status or error, duration), a failed one included; POST /v1/webhook-events/{id}/replay sends it once more with the same event ID and a fresh timestamp and signature.' },
  { id: 'ND-RATELIMIT-FIELDS', rule: 'Where an implementation sends RateLimit-Policy and RateLimit (IETF draft revision 11, or 10, which writes them alike), they are RFC 9651 Lists of Strings with Integer q and w, r and t, and say what RateLimit-Limit, -Remaining and -Reset say.' },
  { id: 'ND-STANDARD-WEBHOOKS', rule: 'An account opted in to Standard Webhooks receives webhook-id, webhook-timestamp and webhook-signature (v1,<base64 HMAC-SHA256 of id.timestamp.body>) beside the X-Service-* headers, which never change.' },
  { id: 'ND-LISTS', rule: 'GET /v1/avatars and /v1/avatar-videos page the account\'s own records newest first with an opaque cursor; each record shows up exactly once.' },
  { id: 'ND-CREATE-RESPONSE', rule: 'Both POSTs answer 202 with the full new record (status queued) and a Location header.' },
  { id: 'ND-AVATAR-FIELDS', rule: 'The avatar record has the documented members; error is {code, message} when failed, null otherwise; a ready avatar\'s preview_image_url gives a PNG or JPEG image.' },
  { id: 'ND-VIDEO-REQUEST', rule: 'A video request has avatar_id, script (1-5,000 chars), optional aspect_ratio and webhook_url; other members are refused.' },
  { id: 'ND-VIDEO-FIELDS', rule: 'The video record has the documented members; video_url only when ready; duration_seconds is the MP4\'s own length, captions_url gives WebVTT within it, and the download answers byte ranges.' },
  { id: 'ND-ME', rule: 'GET /v1/me shows the account, the key, the month\'s credits and every rate-limit window.' },
  { id: 'ND-AUTH-PRESENTATION', rule: 'Authorization: Bearer <key>; missing or unknown keys get 401 unauthorized with WWW-Authenticate: Bearer.' },
  { id: 'ND-ENVELOPE', rule: 'Events are {id, object: "event", type, api_version: "v1", created_at, data: {object}}; id equals X-Service-Event-Id.' },
  { id: 'ND-TIMESTAMP-AGE', rule: 'Receivers accept timestamps within 300 s of their clock, either way.' },
  { id: 'ND-DELIVERY', rule: `${WEBHOOK_DELIVERY.timeoutSeconds} s per attempt, ${WEBHOOK_DELIVERY.attempts} attempts, retries after about ${WEBHOOK_DELIVERY.retryDelaysSeconds.map((s) => `${formatNumber(s)} s`).join(', ')} (+-${Math.round(WEBHOOK_DELIVERY.jitter * 100)} %).` },
  { id: 'ND-ERROR-BODY', rule: 'Errors are application/problem+json with code, status and request_id; validation errors list {field, rule, message}.' },
  { id: 'ND-ERRORS', rule: '400/401/404/409/413/415/422/429 as documented; other accounts\' IDs answer 404; checks run auth, rate limit, request, resources, credits.' },
  { id: 'ND-CREDIT-COST', rule: `An avatar costs ${CREDIT_COSTS.avatar} credits and a video ${CREDIT_COSTS.avatar_video}; the record states its credits.` },
  { id: 'ND-SANDBOX-FAILURE', rule: 'With a sandbox key, [sandbox:fail] in an avatar name or video script ends the job failed with sandbox_forced_failure.' },
  { id: 'ND-SANDBOX-CLOCK', rule: 'A sandbox account moves its own time forward with POST /v1/test_helpers/clock/advance; its windows, credit period, jobs and webhook retries follow; live keys get 404.' },
  { id: 'ND-FILE-LINKS', rule: 'File links need no key and expire: a read of a record (or a webhook) gives links valid for the stated lifetime on the account\'s time; an expired link answers 403 file_link_expired, an altered one 403 file_link_invalid.' },
  { id: 'ND-COMPAT', rule: 'Only additive changes within /v1; removals ship as /v2 with Deprecation and Sunset headers.' },
] as const;

export type DecisionId = (typeof DECISIONS)[number]['id'];

const byId = new Map<string, Clause>(CLAUSES.map((clause) => [clause.id, clause]));

export function clause(id: ClauseId): Clause {
  const found = byId.get(id);
  if (!found) throw new Error(`unknown clause ${id}`);
  return found;
}
