// The jobs a run shares between its checks. Generation requests are the scarcest thing
// a run has (10 a minute per key), so the avatars and videos are made once, in a fixed
// order, and every check that needs one awaits it here. The jobs start before the
// first check so that they process while the quick checks run.
import type { AvatarClient, JobKind } from '../../client/src/index.ts';
import { PrerequisiteError } from './context.ts';
import type { Exchange, Http, KeyName } from './http.ts';
import type { ResolvedOptions } from './options.ts';
import type { ReceiverMode, WebhookReceiver } from './receiver/server.ts';

export type Json = Record<string, unknown>;

export interface PollRecord {
  at: number;
  status: string;
  record: Json;
}

export interface TrackedJob {
  label: string;
  kind: JobKind;
  key: KeyName;
  /** What the run expects it to end as. */
  expected: 'ready' | 'failed' | 'any';
  webhookMode: ReceiverMode | undefined;
  webhookUrl: string | undefined;
  body: Json;
  create: Exchange;
  id: string | undefined;
  createdRecord: Json | undefined;
  /** Every record polled, in order, the creation answer first. */
  polls: PollRecord[];
  terminal: Json | undefined;
  terminalAt: number | undefined;
  settled: Promise<Json>;
}

export interface Balance {
  quota: number;
  used: number;
  reserved: number;
  available: number;
}

export interface WorldDeps {
  http: Http;
  clients: Partial<Record<KeyName, AvatarClient>>;
  receiver: WebhookReceiver | undefined;
  options: ResolvedOptions;
  now: () => number;
}

const SCRIPT = 'Hi! This short clip was made by the conformance runner to check the avatar video flow.';

export class World {
  readonly jobs: TrackedJob[] = [];
  /** GET /v1/me answers taken at fixed moments: `<key>:before`, `main:after-first`, `<key>:after`. */
  readonly snapshots = new Map<string, Exchange>();
  notReadyAttempt: { exchange: Exchange; statusAfter: string | undefined } | undefined;
  readonly #deps: WorldDeps;
  readonly #memo = new Map<string, Promise<unknown>>();

  constructor(deps: WorldDeps) {
    this.#deps = deps;
  }

  get receiver(): WebhookReceiver | undefined {
    return this.#deps.receiver;
  }

  /** Starts the run's jobs; every later call returns the same promise. */
  kickoff(): Promise<void> {
    return this.#once('kickoff', async () => {
      const { options } = this.#deps;
      this.snapshots.set('main:before', await this.me('main'));
      if (this.#deps.clients.second) this.snapshots.set('second:before', await this.me('second'));
      if (this.#deps.clients.empty) this.snapshots.set('empty:before', await this.me('empty'));

      const prompt = await this.#createAvatar('prompt-avatar', 'ready', 'fail-first', {
        type: 'prompt',
        name: 'Conformance presenter',
        prompt: 'A friendly presenter in a bright studio, looking into the camera.',
      });
      this.snapshots.set('main:after-first', await this.me('main'));

      // A video from an avatar that was queued a moment ago (AV-READY-BEFORE-VIDEO).
      if (prompt.id) {
        const exchange = await this.#send('main', 'POST', '/v1/avatar-videos', { avatar_id: prompt.id, script: SCRIPT }, 'video from an avatar not ready yet');
        this.trackUnexpected('unexpected-video-from-unready-avatar', 'avatar_video', 'main', exchange);
        const after = await this.#send('main', 'GET', `/v1/avatars/${prompt.id}`, undefined, 'status right after the attempt');
        this.notReadyAttempt = { exchange, statusAfter: statusOf(after.json) };
      }

      await this.#createAvatar('photo-avatar', 'any', 'always-fail', {
        type: 'photo',
        name: 'Conformance portrait',
        file: { type: 'url', url: options.photoUrl },
      });
      await this.#createAvatar('props-avatar', 'ready', undefined, {
        type: 'props',
        name: 'Conformance props',
        ethnicity: 'Hispanic',
        sex: 'female',
        age: 20,
      });
      if (options.failMarker) {
        await this.#createAvatar('failed-avatar', 'failed', 'ok', {
          type: 'prompt',
          name: `Conformance failure ${options.failMarker}`,
          prompt: 'Any description: the marker in the name makes this job fail.',
        });
      }
      // Early, so that a job wrongly started by it has long finished when checked.
      if (this.#deps.clients.empty) await this.insufficientAttempt();
      // The videos start as soon as their avatars allow, while the checks go on.
      void this.video().catch(() => undefined);
      if (options.failMarker) {
        void this.failedVideo().catch(() => undefined);
        void this.videoFromFailedAvatar().catch(() => undefined);
      }
    });
  }

  job(label: string): TrackedJob | undefined {
    return this.jobs.find((job) => job.label === label);
  }

  /** One of the kickoff jobs; throws PrerequisiteError when it was not made. */
  async kickoffJob(label: 'prompt-avatar' | 'photo-avatar' | 'props-avatar' | 'failed-avatar'): Promise<TrackedJob> {
    await this.kickoff();
    const job = this.job(label);
    if (!job) throw new PrerequisiteError(`the ${label} was not requested (no fail marker configured?)`);
    if (!job.id) throw new PrerequisiteError(`the ${label} could not be created: ${job.create.status} ${job.create.bodyText.slice(0, 200)}`);
    return job;
  }

  /** The terminal record of a job; throws PrerequisiteError when it never got there. */
  async settled(job: TrackedJob): Promise<Json> {
    return job.settled;
  }

  /** The prompt avatar once ready: the one videos are made from. */
  async readyAvatar(): Promise<TrackedJob> {
    const job = await this.kickoffJob('prompt-avatar');
    const record = await job.settled;
    if (record.status !== 'ready') throw new PrerequisiteError(`the prompt avatar ended ${String(record.status)}, not ready: ${JSON.stringify(record.error)}`);
    return job;
  }

  video(): Promise<TrackedJob> {
    return this.#once('video', async () => {
      const avatar = await this.readyAvatar();
      return this.#createVideo('video', 'ready', 'ok', { avatar_id: avatar.id, script: SCRIPT });
    });
  }

  failedVideo(): Promise<TrackedJob> {
    return this.#once('failed-video', async () => {
      const marker = this.#deps.options.failMarker;
      if (!marker) throw new PrerequisiteError('no fail marker is configured');
      const avatar = await this.readyAvatar();
      return this.#createVideo('failed-video', 'failed', 'ok', { avatar_id: avatar.id, script: `${SCRIPT} ${marker}` });
    });
  }

  /** A video requested from the avatar that failed (AV-READY-BEFORE-VIDEO). */
  videoFromFailedAvatar(): Promise<Exchange> {
    return this.#once('video-from-failed-avatar', async () => {
      const avatar = await this.kickoffJob('failed-avatar');
      const record = await avatar.settled;
      if (record.status !== 'failed') throw new PrerequisiteError(`the avatar meant to fail ended ${String(record.status)}`);
      const exchange = await this.#send('main', 'POST', '/v1/avatar-videos', { avatar_id: avatar.id, script: SCRIPT }, 'video from a failed avatar');
      this.trackUnexpected('unexpected-video-from-failed-avatar', 'avatar_video', 'main', exchange);
      return exchange;
    });
  }

  /** A valid avatar request on the key without credits (CR-402). */
  insufficientAttempt(): Promise<Exchange> {
    return this.#once('insufficient', async () => {
      if (!this.#deps.clients.empty) throw new PrerequisiteError('no --empty-key was given');
      const body: Json = { type: 'prompt', name: 'Conformance without credits', prompt: 'A presenter that must never be generated.' };
      const url = this.webhookUrl('refused-402', 'ok');
      if (url) body.webhook_url = url;
      const exchange = await this.#send('empty', 'POST', '/v1/avatars', body, 'valid request without credits');
      this.trackUnexpected('unexpected-avatar-without-credits', 'avatar', 'empty', exchange);
      return exchange;
    });
  }

  /** Every job of the run at rest, videos made, and the after-snapshots taken. */
  allSettled(): Promise<TrackedJob[]> {
    return this.#once('all-settled', async () => {
      await this.kickoff();
      await this.video().catch(() => undefined);
      if (this.#deps.options.failMarker) {
        await this.failedVideo().catch(() => undefined);
        await this.videoFromFailedAvatar().catch(() => undefined);
      }
      if (this.#deps.clients.empty) await this.insufficientAttempt().catch(() => undefined);
      await Promise.allSettled(this.jobs.map((job) => job.settled));
      for (const key of ['main', 'second', 'empty'] as const) {
        if (this.#deps.clients[key]) this.snapshots.set(`${key}:after`, await this.me(key));
      }
      return this.jobs;
    });
  }

  /**
   * How much longer to listen for the webhook of a job that a request refused at
   * `since` might wrongly have started: as long as the run's longest job took, plus a
   * second for delivery, counted from `since`; at most 30 s.
   */
  settleGraceMs(since: number): number {
    const longest = Math.max(0, ...this.jobs.map((job) => (job.terminalAt ?? 0) - job.create.startedAt).filter((ms) => ms > 0));
    return Math.max(0, Math.min(30_000, since + longest + 1000 - this.#deps.now()));
  }

  /** The URL for a job's webhook, or undefined when webhooks cannot reach the runner. */
  webhookUrl(label: string, mode: ReceiverMode): string | undefined {
    return this.#deps.receiver?.urlFor(label, mode);
  }

  async me(key: KeyName): Promise<Exchange> {
    return this.#send(key, 'GET', '/v1/me', undefined, 'balance snapshot');
  }

  async #createAvatar(label: string, expected: TrackedJob['expected'], mode: ReceiverMode | undefined, body: Json): Promise<TrackedJob> {
    const url = mode ? this.webhookUrl(label, mode) : undefined;
    const sent = url ? { ...body, webhook_url: url } : body;
    const exchange = await this.#send('main', 'POST', '/v1/avatars', sent, label);
    return this.#track(label, 'avatar', 'main', expected, url ? mode : undefined, url, sent, exchange);
  }

  async #createVideo(label: string, expected: TrackedJob['expected'], mode: ReceiverMode, body: Json): Promise<TrackedJob> {
    const url = this.webhookUrl(label, mode);
    const sent = url ? { ...body, webhook_url: url } : body;
    const exchange = await this.#send('main', 'POST', '/v1/avatar-videos', sent, label);
    const job = this.#track(label, 'avatar_video', 'main', expected, url ? mode : undefined, url, sent, exchange);
    if (!job.id) throw new PrerequisiteError(`the ${label} could not be created: ${exchange.status} ${exchange.bodyText.slice(0, 200)}`);
    return job;
  }

  /** A request the service should have refused but accepted still makes a job to account for. */
  trackUnexpected(label: string, kind: JobKind, key: KeyName, exchange: Exchange): void {
    if (exchange.status >= 200 && exchange.status < 300 && idOf(exchange.json)) {
      this.#track(label, kind, key, 'any', undefined, undefined, {}, exchange);
    }
  }

  #track(
    label: string,
    kind: JobKind,
    key: KeyName,
    expected: TrackedJob['expected'],
    webhookMode: ReceiverMode | undefined,
    webhookUrl: string | undefined,
    body: Json,
    create: Exchange,
  ): TrackedJob {
    const { options, now } = this.#deps;
    const accepted = create.status >= 200 && create.status < 300;
    const record = accepted && isJson(create.json) ? create.json : undefined;
    const id = record ? idOf(record) : undefined;
    const job: TrackedJob = {
      label,
      kind,
      key,
      expected,
      webhookMode,
      webhookUrl,
      body,
      create,
      id,
      createdRecord: record,
      polls: record && typeof record.status === 'string' ? [{ at: create.startedAt + create.durationMs, status: record.status, record }] : [],
      terminal: undefined,
      terminalAt: undefined,
      settled: Promise.resolve({}),
    };
    job.settled = (async () => {
      if (!id) throw new PrerequisiteError(`the ${label} was not created: ${create.status} ${create.bodyText.slice(0, 200)}`);
      const client = this.#deps.clients[key];
      if (!client) throw new PrerequisiteError(`no client for the ${key} key`);
      try {
        const terminal = await client.waitForTerminal(kind, id, {
          deadlineMs: options.jobTimeoutSeconds * 1000,
          initialDelayMs: options.pollInitialDelayMs,
          maxDelayMs: options.pollMaxDelayMs,
          onPoll: (polled) => job.polls.push({ at: now(), status: polled.status, record: polled as unknown as Json }),
        });
        job.terminal = terminal as unknown as Json;
        job.terminalAt = now();
        return job.terminal;
      } catch (error) {
        throw new PrerequisiteError(`the ${label} ${id} did not reach ready or failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    })();
    job.settled.catch(() => undefined);
    this.jobs.push(job);
    return job;
  }

  async #send(key: KeyName, method: 'GET' | 'POST', path: string, json: unknown, note: string): Promise<Exchange> {
    return this.#deps.http.send({ key, method, path, ...(json === undefined ? {} : { json }), note });
  }

  #once<T>(name: string, work: () => Promise<T>): Promise<T> {
    let pending = this.#memo.get(name) as Promise<T> | undefined;
    if (!pending) {
      pending = work();
      pending.catch(() => undefined);
      this.#memo.set(name, pending);
    }
    return pending;
  }
}

export function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function idOf(value: unknown): string | undefined {
  return isJson(value) && typeof value.id === 'string' && value.id ? value.id : undefined;
}

export function statusOf(value: unknown): string | undefined {
  return isJson(value) && typeof value.status === 'string' ? value.status : undefined;
}

/** The credit balance /v1/me shows, when it shows one in the contract's shape (ND-ME). */
export function balanceOf(exchange: Exchange | undefined): Balance | undefined {
  const credits = exchange && exchange.status === 200 && isJson(exchange.json) ? exchange.json.credits : undefined;
  if (!isJson(credits)) return undefined;
  const { quota, used, reserved, available } = credits;
  if ([quota, used, reserved, available].every((n) => typeof n === 'number')) {
    return { quota: quota as number, used: used as number, reserved: reserved as number, available: available as number };
  }
  return undefined;
}
