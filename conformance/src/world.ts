// The jobs a run shares between its checks. Generation requests are the scarcest thing
// a run has (the contract's generation bucket is the smallest), so the avatars and videos are made once, in a fixed
// order, and every check that needs one awaits it here. The jobs start before the
// first check so that they process while the quick checks run. Requests are spelled and
// records read through the implementation's shape, never this project's own choices.
import type { Exchange, Http, KeyName } from './http.ts';
import type { JobKind, Json } from './implementation/profile.ts';
import type { Shape, Terminal } from './implementation/shape.ts';
import type { ResolvedOptions } from './options.ts';
import { PrerequisiteError } from './outcome.ts';
import type { ReceiverMode, WebhookReceiver } from './receiver/server.ts';

export type { JobKind, Json };

export interface PollRecord {
  /** When the answer arrived, runner clock. */
  at: number;
  /** When the GET was sent. */
  sentAt: number;
  /** The state as the implementation spells it ("" when the record shows none). */
  status: string;
  /** The source's name when terminal. */
  terminal: Terminal | undefined;
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
  /** The create answer's body, when it was accepted. */
  createdRecord: Json | undefined;
  /** When the create answer arrived, runner clock. */
  answeredAt: number;
  /** Every record read with GET, in order; the first is sent as soon as the create answer arrived. */
  polls: PollRecord[];
  /** The first terminal record GET showed, and how it ended by the source's names. */
  terminal: Json | undefined;
  ended: Terminal | undefined;
  terminalAt: number | undefined;
  settled: Promise<Json>;
}

export interface WorldDeps {
  http: Http;
  keys: readonly KeyName[];
  shape: Shape;
  receiver: WebhookReceiver | undefined;
  options: ResolvedOptions;
  now: () => number;
  /** Ends early, rejecting, when `signal` aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * The most creates the run's shared jobs send on keys with credits, whatever checks use
 * them (kickoff starts them all): the prompt, photo and props avatars and the ready
 * video, the video asked of an avatar not ready yet (refused by a correct service); with
 * a failure trigger, the failed avatar, the failed video and the video asked of it. The
 * request without credits goes on the key that has none.
 */
export function sharedCreates(canFail: boolean): { avatar: number; avatar_video: number } {
  return { avatar: 3 + (canFail ? 1 : 0), avatar_video: 2 + (canFail ? 2 : 0) };
}

/**
 * The longest a check listens for the webhook of a job a refused request might wrongly
 * have started (as long as the run's longest job took, and a second). The refused
 * requests are avatars: the longest an avatar takes and a delivery's lateness, by the
 * implementation profile's timings (the contract's 4 s and 2 s), short enough that the
 * checks that listen, one after another, do not take the run's bound, and long enough
 * for a slower implementation's wrongly started job to be heard.
 */
export function settleGraceMaxSeconds(options: Pick<ResolvedOptions, 'jobSeconds' | 'webhookRetryTimeoutSeconds'>): number {
  return options.jobSeconds.avatar + options.webhookRetryTimeoutSeconds;
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
      const { options, shape } = this.#deps;
      this.snapshots.set('main:before', await this.me('main'));
      if (this.#has('second')) this.snapshots.set('second:before', await this.me('second'));
      if (this.#has('empty')) this.snapshots.set('empty:before', await this.me('empty'));

      const prompt = await this.#createAvatar('prompt-avatar', 'ready', 'fail-first', {
        type: 'prompt',
        name: 'Conformance presenter',
        prompt: 'A friendly presenter in a bright studio, looking into the camera.',
      });
      this.snapshots.set('main:after-first', await this.me('main'));

      // A video from an avatar that was accepted a moment ago (AV-READY-BEFORE-VIDEO).
      if (prompt.id) {
        const exchange = await this.#send('main', 'POST', '/v1/avatar-videos', shape.videoBody(prompt.id, SCRIPT), 'video from an avatar not ready yet');
        this.trackUnexpected('unexpected-video-from-unready-avatar', 'avatar_video', 'main', exchange);
        const after = await this.#send('main', 'GET', `/v1/avatars/${prompt.id}`, undefined, 'state right after the attempt');
        this.notReadyAttempt = { exchange, statusAfter: shape.state(after.json) };
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
      if (shape.canFail()) {
        await this.#createAvatar(
          'failed-avatar',
          'failed',
          'ok',
          { type: 'prompt', name: 'Conformance failure', prompt: 'Any description: the failure trigger makes this job fail.' },
          true,
        );
      }
      // Early, so that a job wrongly started by it has long finished when checked.
      if (this.#has('empty')) await this.insufficientAttempt();
      // The videos start as soon as their avatars allow, while the checks go on.
      void this.video().catch(() => undefined);
      if (shape.canFail()) {
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
    if (!job) throw new PrerequisiteError(`the ${label} was not requested (the implementation profile has no failure trigger)`);
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
    if (job.ended !== 'ready') throw new PrerequisiteError(`the prompt avatar ended ${String(this.#deps.shape.state(record))}, not ready: ${JSON.stringify(record.error)}`);
    return job;
  }

  video(): Promise<TrackedJob> {
    return this.#once('video', async () => {
      const avatar = await this.readyAvatar();
      return this.#createVideo('video', 'ready', 'ok', avatar.id!, false);
    });
  }

  failedVideo(): Promise<TrackedJob> {
    return this.#once('failed-video', async () => {
      if (!this.#deps.shape.canFail()) throw new PrerequisiteError('the implementation profile has no failure trigger');
      const avatar = await this.readyAvatar();
      return this.#createVideo('failed-video', 'failed', 'ok', avatar.id!, true);
    });
  }

  /** A video requested from the avatar that failed (AV-READY-BEFORE-VIDEO). */
  videoFromFailedAvatar(): Promise<Exchange> {
    return this.#once('video-from-failed-avatar', async () => {
      const avatar = await this.kickoffJob('failed-avatar');
      const record = await avatar.settled;
      if (avatar.ended !== 'failed') throw new PrerequisiteError(`the avatar meant to fail ended ${String(this.#deps.shape.state(record))}`);
      const exchange = await this.#send('main', 'POST', '/v1/avatar-videos', this.#deps.shape.videoBody(avatar.id!, SCRIPT), 'video from a failed avatar');
      this.trackUnexpected('unexpected-video-from-failed-avatar', 'avatar_video', 'main', exchange);
      return exchange;
    });
  }

  /** A valid avatar request on the key without credits (CR-402). */
  insufficientAttempt(): Promise<Exchange> {
    return this.#once('insufficient', async () => {
      if (!this.#has('empty')) throw new PrerequisiteError('no --empty-key was given');
      const body = this.#deps.shape.avatarBody(
        { type: 'prompt', name: 'Conformance without credits', prompt: 'A presenter that must never be generated.' },
        { webhookUrl: this.webhookUrl('refused-402', 'ok') },
      );
      const exchange = await this.#send('empty', 'POST', '/v1/avatars', body, 'valid request without credits');
      this.trackUnexpected('unexpected-avatar-without-credits', 'avatar', 'empty', exchange);
      return exchange;
    });
  }

  /**
   * One more job of `kind` on the main key, without a webhook, for a check that needs
   * another observation than the run's own jobs gave (AV-ASYNC, when every job of a kind
   * was already done at its first read). It is tracked like the run's own jobs, so the
   * checks that count jobs and credits count it too: the next allSettled() awaits it and
   * takes the after-snapshots again. Undefined, with the answer, when it was refused.
   */
  async extraJob(kind: JobKind, label: string): Promise<{ create: Exchange; job: TrackedJob | undefined }> {
    const { shape } = this.#deps;
    const body =
      kind === 'avatar'
        ? shape.avatarBody({ type: 'prompt', name: 'Conformance extra', prompt: 'A presenter made to observe a create answer once more.' })
        : shape.videoBody((await this.readyAvatar()).id!, SCRIPT);
    const path = kind === 'avatar' ? '/v1/avatars' : '/v1/avatar-videos';
    const create = await this.#send('main', 'POST', path, body, label);
    if (!(create.status >= 200 && create.status < 300 && shape.createdId(kind, create.json))) return { create, job: undefined };
    // Before the job is tracked: a snapshot taken from here on waits for it.
    this.#memo.delete('all-settled');
    return { create, job: this.#track(label, kind, 'main', 'ready', undefined, undefined, body, create) };
  }

  /** Every job of the run at rest, videos made, and the after-snapshots taken. */
  allSettled(): Promise<TrackedJob[]> {
    return this.#once('all-settled', async () => {
      await this.kickoff();
      await this.video().catch(() => undefined);
      if (this.#deps.shape.canFail()) {
        await this.failedVideo().catch(() => undefined);
        await this.videoFromFailedAvatar().catch(() => undefined);
      }
      if (this.#has('empty')) await this.insufficientAttempt().catch(() => undefined);
      await Promise.allSettled(this.jobs.map((job) => job.settled));
      for (const key of this.#deps.keys) this.snapshots.set(`${key}:after`, await this.me(key));
      return this.jobs;
    });
  }

  /**
   * How much longer to listen for the webhook of a job that a request refused at
   * `since` might wrongly have started: as long as the run's longest job took, plus a
   * second for delivery, counted from `since`; at most settleGraceMaxSeconds.
   */
  settleGraceMs(since: number): number {
    const longest = Math.max(0, ...this.jobs.map((job) => (job.terminalAt ?? 0) - job.create.startedAt).filter((ms) => ms > 0));
    return Math.max(0, Math.min(settleGraceMaxSeconds(this.#deps.options) * 1000, since + longest + 1000 - this.#deps.now()));
  }

  /** The URL for a job's webhook, or undefined when webhooks cannot reach the runner. */
  webhookUrl(label: string, mode: ReceiverMode): string | undefined {
    return this.#deps.receiver?.urlFor(label, mode);
  }

  async me(key: KeyName): Promise<Exchange> {
    return this.#send(key, 'GET', '/v1/me', undefined, 'balance snapshot');
  }

  /** Every job of the run ended as expected by the source's names (`any` matches both). */
  async #createAvatar(label: string, expected: TrackedJob['expected'], mode: ReceiverMode | undefined, body: Json, fail = false): Promise<TrackedJob> {
    const url = mode ? this.webhookUrl(label, mode) : undefined;
    const sent = this.#deps.shape.avatarBody(body, { fail, webhookUrl: url });
    const exchange = await this.#send('main', 'POST', '/v1/avatars', sent, label);
    return this.#track(label, 'avatar', 'main', expected, url ? mode : undefined, url, sent, exchange);
  }

  async #createVideo(label: string, expected: TrackedJob['expected'], mode: ReceiverMode, avatarId: string, fail: boolean): Promise<TrackedJob> {
    const url = this.webhookUrl(label, mode);
    const sent = this.#deps.shape.videoBody(avatarId, SCRIPT, { fail, webhookUrl: url });
    const exchange = await this.#send('main', 'POST', '/v1/avatar-videos', sent, label);
    const job = this.#track(label, 'avatar_video', 'main', expected, url ? mode : undefined, url, sent, exchange);
    if (!job.id) throw new PrerequisiteError(`the ${label} could not be created: ${exchange.status} ${exchange.bodyText.slice(0, 200)}`);
    return job;
  }

  /** A request the service should have refused but accepted still makes a job to account for. */
  trackUnexpected(label: string, kind: JobKind, key: KeyName, exchange: Exchange): void {
    if (exchange.status >= 200 && exchange.status < 300 && this.#deps.shape.createdId(kind, exchange.json)) {
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
    const { shape, now } = this.#deps;
    const accepted = create.status >= 200 && create.status < 300;
    const record = accepted && isJson(create.json) ? create.json : undefined;
    const id = record ? shape.createdId(kind, record) : undefined;
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
      answeredAt: create.startedAt + create.durationMs,
      polls: [],
      terminal: undefined,
      ended: undefined,
      terminalAt: undefined,
      settled: Promise.resolve({}),
    };
    job.settled = (async () => {
      if (!id) throw new PrerequisiteError(`the ${label} was not created: ${create.status} ${create.bodyText.slice(0, 200)}`);
      const terminal = await this.#poll(job, id);
      job.terminal = terminal;
      job.ended = shape.terminal(shape.state(terminal));
      job.terminalAt = now();
      return terminal;
    })();
    job.settled.catch(() => undefined);
    this.jobs.push(job);
    return job;
  }

  /**
   * Reads the job until GET shows a terminal state: the first read as soon as the create
   * answer is in (what "answers at once, before generation is done" is judged by), then
   * backing off from pollInitialDelayMs to pollMaxDelayMs, or sooner when the job's
   * webhook comes (#pause). Only a read decides that the job ended.
   */
  async #poll(job: TrackedJob, id: string): Promise<Json> {
    const { options, shape, now } = this.#deps;
    const path = `${job.kind === 'avatar' ? '/v1/avatars' : '/v1/avatar-videos'}/${id}`;
    const deadline = now() + options.jobSeconds[job.kind] * 1000;
    let delay = options.pollInitialDelayMs;
    for (;;) {
      const sentAt = now();
      // Counted before the read: an attempt that arrives while it is under way wakes the next.
      const attemptsSeen = this.#deps.receiver?.attempts(job.label).length ?? 0;
      const exchange = await this.#send(job.key, 'GET', path, undefined, `poll ${job.label}`);
      if (exchange.status === 200 && isJson(exchange.json)) {
        const status = shape.state(exchange.json) ?? '';
        const terminal = shape.terminal(status);
        job.polls.push({ at: exchange.startedAt + exchange.durationMs, sentAt, status, terminal, record: exchange.json });
        if (terminal) return exchange.json;
      } else if (exchange.status !== 429 && exchange.status < 500) {
        throw new PrerequisiteError(`reading the ${job.label} ${id} answered ${exchange.status}: ${exchange.bodyText.slice(0, 200)}`);
      }
      if (now() + delay > deadline) {
        const seen = [...new Set(job.polls.map((poll) => poll.status || '(no state)'))].join(' → ') || 'nothing';
        throw new PrerequisiteError(`the ${job.label} ${id} did not reach ${shape.nameOf('ready')} or ${shape.nameOf('failed')} within ${options.jobSeconds[job.kind]} s (states seen: ${seen})`);
      }
      await this.#pause(job, delay, attemptsSeen);
      delay = Math.min(options.pollMaxDelayMs, Math.round(delay * 1.5));
    }
  }

  /**
   * Waits `ms` before the job's next read, or less: an attempt of the job's webhook that
   * arrives meanwhile says the job has likely ended, so the read that would confirm it
   * goes at once rather than up to pollMaxDelayMs later (the run's later checks wait on
   * its jobs being read at rest).
   */
  async #pause(job: TrackedJob, ms: number, attemptsSeen: number): Promise<void> {
    const { receiver, sleep } = this.#deps;
    if (!receiver || !job.webhookUrl) return sleep(ms);
    const stop = new AbortController();
    const arrival = receiver.waitFor(job.label, attemptsSeen + 1, ms, stop.signal).catch(() => undefined);
    // The run's end still ends the pause; the pause's own end only ends its sleep.
    const slept = sleep(ms, stop.signal).catch((error: unknown) => {
      if (!stop.signal.aborted) throw error;
    });
    try {
      await Promise.race([slept, arrival]);
    } finally {
      // No timer or listener of the wait or the sleep outlives the pause.
      stop.abort();
    }
  }

  async #send(key: KeyName, method: 'GET' | 'POST', path: string, json: unknown, note: string): Promise<Exchange> {
    return this.#deps.http.send({ key, method, path, ...(json === undefined ? {} : { json }), note });
  }

  #has(key: KeyName): boolean {
    return this.#deps.keys.includes(key);
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

