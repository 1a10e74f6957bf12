// Reads and builds the implementation's messages through its profile: where a record
// keeps its state, what the terminal states are called, where an error carries its
// code, what /v1/me shows, how each create request is spelled. Checks and the world ask
// here and never assume this project's own choices; the source's own names (id,
// video_url, error, data.object, the event type values) are read as they are.
import type { Exchange } from '../http.ts';
import { at, BALANCE_MEMBERS, merge, render, usesPlaceholder, type BalanceMember, type ImplementationProfile, type JobKind, type Json } from './profile.ts';

/** The balances GET /v1/me shows: only the members the profile names (account.credits). */
export type Balance = Partial<Record<BalanceMember, number>>;

export interface WindowView {
  limit: number;
  remaining: number;
  reset: number;
}

/** The two terminal states by the source's names (section 3), whatever the implementation calls them. */
export type Terminal = 'ready' | 'failed';

export class Shape {
  readonly profile: ImplementationProfile;

  constructor(profile: ImplementationProfile) {
    this.profile = profile;
  }

  /** The header and value that present a key. */
  credential(token: string): [name: string, value: string] {
    const { header, scheme } = this.profile.auth;
    return [header.toLowerCase(), scheme ? `${scheme} ${token}` : token];
  }

  /** The body of an avatar request: the source's fields, the profile's extras, the failure trigger on request. */
  avatarBody(body: Json, options: { fail?: boolean; webhookUrl?: string | undefined } = {}): Json {
    let out = merge(body, this.profile.create.avatar.extra);
    if (options.fail && this.profile.failure) {
      out = merge(out, render(this.profile.failure.avatar, { name: body.name, prompt: body.prompt }) as Json);
    }
    if (options.webhookUrl) out.webhook_url = options.webhookUrl;
    return out;
  }

  /** The body of a video request, from the profile's template. */
  videoBody(avatarId: string, script: string, options: { fail?: boolean; webhookUrl?: string | undefined } = {}): Json {
    const template = this.profile.create.video.body;
    let out = render(template, { avatar_id: avatarId, script, webhook_url: options.webhookUrl }) as Json;
    if (options.fail && this.profile.failure) out = merge(out, render(this.profile.failure.video, { avatar_id: avatarId, script }) as Json);
    // The source names webhook_url on both POSTs; a template may place it elsewhere.
    if (options.webhookUrl && !usesPlaceholder(template, 'webhook_url')) out.webhook_url = options.webhookUrl;
    return out;
  }

  canFail(): boolean {
    return this.profile.failure !== null;
  }

  /** Whether a create answer's status is one the implementation declares for success. */
  isCreated(kind: JobKind, status: number): boolean {
    return this.profile.create[kind === 'avatar' ? 'avatar' : 'video'].statuses.includes(status);
  }

  /** The new job's ID in a create answer. */
  createdId(kind: JobKind, json: unknown): string | undefined {
    return text(at(json, this.profile.create[kind === 'avatar' ? 'avatar' : 'video'].id));
  }

  /** A record's own ID: the source names it `id` (AV-GET, VID-GET, data.object.id). */
  recordId(json: unknown): string | undefined {
    return text(at(json, '/id'));
  }

  /** The state a record shows, as the implementation spells it. */
  state(json: unknown): string | undefined {
    return text(at(json, this.profile.records.status));
  }

  /** The source's name for a terminal state, or undefined while the job is pending (or unknown). */
  terminal(state: string | undefined): Terminal | undefined {
    const { ready, failed } = this.profile.records.states;
    return state === ready ? 'ready' : state === failed ? 'failed' : undefined;
  }

  isPending(state: string | undefined): boolean {
    return state !== undefined && this.profile.records.states.pending.includes(state);
  }

  /** The implementation's spelling of a terminal state. */
  nameOf(terminal: Terminal): string {
    return this.profile.records.states[terminal];
  }

  /** Credits a record says it costs, where the profile says records show it. */
  creditsOf(record: unknown): number | undefined {
    const pointer = this.profile.records.credits;
    const value = pointer === null ? undefined : at(record, pointer);
    return typeof value === 'number' ? value : undefined;
  }

  /** The price of a job: the profile's, else what the record states. */
  price(kind: JobKind, record?: unknown): number | undefined {
    return this.profile.prices?.[kind] ?? (record === undefined ? undefined : this.creditsOf(record));
  }

  /** The error code of an answer, where the profile says errors carry it (undefined when it says "anywhere"). */
  errorCode(exchange: Exchange): string | undefined {
    const where = this.profile.errors.code;
    if (where === null) return undefined;
    const value = text('header' in where ? exchange.responseHeaders[where.header.toLowerCase()]?.trim() : at(exchange.json, where.pointer));
    return value === undefined || where.form === 'value' ? value : lastSegment(value);
  }

  /**
   * Whether an error answer carries `code`: where the profile says, or, when it says
   * "anywhere", as a whole word in any string of the body (a member's value or name, or
   * the text of a body that is not JSON): a URI ending in the code carries it, a longer
   * word that merely contains it does not.
   */
  carries(exchange: Exchange, code: string): boolean {
    if (this.profile.errors.code !== null) return this.errorCode(exchange) === code;
    const word = new RegExp(`(?<![A-Za-z0-9_])${code.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9_])`);
    const seen = (value: unknown): boolean =>
      typeof value === 'string'
        ? word.test(value)
        : Array.isArray(value)
          ? value.some(seen)
          : value !== null && typeof value === 'object'
            ? Object.entries(value).some(([name, member]) => word.test(name) || seen(member))
            : false;
    return exchange.json !== undefined ? seen(exchange.json) : word.test(exchange.bodyText);
  }

  /** Where an error's code is expected, for messages. */
  describeErrorCode(code: string): string {
    const where = this.profile.errors.code;
    if (where === null) return `${code} as a whole word somewhere in the body`;
    const place = 'header' in where ? `header ${where.header}` : where.pointer;
    return where.form === 'uri' ? `a URI ending in /${code} at ${place}` : `${code} at ${place}`;
  }

  /** Statuses that say "this request is invalid". */
  get validationStatuses(): readonly number[] {
    return this.profile.errors.validation;
  }

  accountId(json: unknown): string | undefined {
    const pointer = this.profile.account.id;
    return pointer === null ? undefined : text(at(json, pointer));
  }

  /** Whether GET /v1/me shows this balance, by the profile. */
  shows(member: BalanceMember): boolean {
    return this.profile.account.credits?.[member] !== undefined;
  }

  /**
   * The balances GET /v1/me shows, where the profile says it shows them: each member it
   * names, and undefined when it names none or the answer lacks one of them.
   */
  balance(exchange: Exchange | undefined): Balance | undefined {
    const pointers = this.profile.account.credits;
    if (!pointers || !exchange || exchange.status !== 200) return undefined;
    const out: Balance = {};
    for (const member of BALANCE_MEMBERS) {
      const pointer = pointers[member];
      if (pointer === undefined) continue;
      const value = at(exchange.json, pointer);
      if (typeof value !== 'number') return undefined;
      out[member] = value;
    }
    return out;
  }

  /** Whether GET /v1/me says the key is live (its jobs billed), sandbox, or nothing (undefined). */
  mode(exchange: Exchange | undefined): 'live' | 'sandbox' | undefined {
    const pointer = this.profile.account.mode;
    if (!pointer || !exchange || exchange.status !== 200) return undefined;
    const value = at(exchange.json, pointer);
    return typeof value !== 'string' ? undefined : /live/i.test(value) ? 'live' : 'sandbox';
  }

  /** The generation windows GET /v1/me shows, where the profile says it shows them. */
  generationWindows(json: unknown): WindowView[] {
    return this.profile.account.generationWindows.flatMap((pointers) => {
      const view = { limit: at(json, pointers.limit), remaining: at(json, pointers.remaining), reset: at(json, pointers.reset) };
      return Object.values(view).every((value) => typeof value === 'number') ? [view as WindowView] : [];
    });
  }

  /** An event's type (avatar.ready, …): from its body or a header, as the profile says. */
  eventType(delivery: { headers: Record<string, string>; json: unknown }): unknown {
    const where = this.profile.events.type;
    return 'header' in where ? delivery.headers[where.header.toLowerCase()] : at(delivery.json, where.pointer);
  }

  /** The request that moves a sandbox account's time forward by whole `seconds`, if the profile names one. */
  clockAdvance(seconds: number): { method: 'POST' | 'PUT' | 'PATCH'; path: string; json: Json } | undefined {
    const clock = this.profile.clock;
    return clock ? { method: clock.advance.method, path: clock.advance.path, json: render(clock.advance.body, { seconds }) as Json } : undefined;
  }

  /** The webhook retry schedule the implementation documents, if the profile states it. */
  get retries(): { delaysSeconds: number[]; jitter: number } | undefined {
    return this.profile.retries ?? undefined;
  }


  /** Where the event type is, for messages. */
  describeEventType(): string {
    const where = this.profile.events.type;
    return 'header' in where ? `header ${where.header}` : `body member ${where.pointer}`;
  }
}

/** The last segment of a URI's path (or of a URN), without its query or fragment. */
function lastSegment(uri: string): string | undefined {
  const path = uri.split(/[?#]/)[0]!.replace(/\/+$/, '');
  const segment = path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf(':')) + 1);
  try {
    return text(decodeURIComponent(segment));
  } catch {
    return text(segment);
  }
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
