// The benchmark report: what latest.json holds and latest.md renders. Times are ms,
// rates per second, memory in bytes unless a name says otherwise.
import type { CpuCores } from './cpu.ts';
import type { Part, Sizes } from './options.ts';
import type { Attribution } from './profile.ts';
import type { GcTrace, LatencySummary } from './stats.ts';
import type { StoreKind } from './stores.ts';

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryBytes: number;
  node: string;
  platform: string;
  loadAverageAtStart: number[];
}

export interface Commit {
  sha: string | null;
  /** Files changed or untracked when the run started (the figures are of that tree). */
  uncommittedFiles: number;
}

export interface RoundFigure {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses with another status than expected, plus socket errors and timeouts. */
  unexpected: number;
  /** Cores used during the round by the target process, the load generator, PostgreSQL + Redis, and the rest. */
  cpu?: CpuCores;
}

/** `scale`: the read through a balancer to one and to two API processes (PostgreSQL + Redis). */
export type ReadRole = 'ceiling' | 'server' | 'mock' | 'diagnostic' | 'scale';

export interface ReadTarget {
  id: string;
  label: string;
  role: ReadRole;
  store?: StoreKind;
  request: string;
  expectedStatus: number;
  rounds: RoundFigure[];
  /** Medians over the rounds. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  unexpected: number;
  /** Median over the rounds. */
  cpu?: CpuCores;
  vsKoa: Ratios;
  vsPrism: Ratios;
  /** Highest RSS sampled during its loads, and the process's VmHWM after them. */
  peakRssBytes?: number;
  hwmBytes?: number;
}

export interface Ratios {
  rps: number | null;
  p50: number | null;
  p99: number | null;
}

export interface ProfileFigure {
  store: StoreKind;
  what: string;
  attribution: Attribution;
}

/** The server's memory under the read load, looked at twice more on fresh stores (untimed). */
export interface MemoryFigure {
  store: StoreKind;
  /** Under --trace-gc: peak RSS and what V8 says of its heap. */
  traced: { hwmBytes: number; rps: number; gc: GcTrace };
  /** The same load with the young generation capped. */
  capped: { flag: string; hwmBytes: number; rps: number };
}

export interface ReadSection {
  connections: number;
  warmupSeconds: number;
  roundSeconds: number;
  rounds: number;
  targets: ReadTarget[];
  profiles: ProfileFigure[];
  memory: MemoryFigure[];
}

export interface GrowthStore {
  store: StoreKind;
  small: { avatars: number; ids: number; rps: number; p50Ms: number; p99Ms: number; unexpected: number; rounds: RoundFigure[] };
  large: { avatars: number; ids: number; rps: number; p50Ms: number; p99Ms: number; unexpected: number; rounds: RoundFigure[]; seedSeconds: number };
  p99Ratio: number | null;
  /** One call of the job runner's claim on an empty queue, at each size (the runner polls every JOB_POLL_MS). */
  idleClaimMs: { small: number; large: number };
  profile?: Attribution;
}

export interface GrowthSection {
  connections: number;
  roundSeconds: number;
  rounds: number;
  stores: GrowthStore[];
}

export interface WriteStore {
  store: StoreKind;
  rounds: RoundFigure[];
  acceptedPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  unexpected: number;
  statusCodes: Record<string, number>;
  /** Jobs the rounds created (each reserved its credits). */
  jobsAccepted: number;
  /** Of those, still queued or processing when the last round ended: how far the runner, in the same process, fell behind. */
  jobsQueuedAtEnd: number;
  /** Time after the last round until the runner had finished them all (null: not within the limit). */
  queueDrainedSeconds: number | null;
  /** The runner's claim on an empty queue once the rounds' jobs are in the table. */
  idleClaimMsAfter: number;
  profile?: Attribution;
}

export interface WriteSection {
  connections: number;
  roundSeconds: number;
  rounds: number;
  body: string;
  /** Bare Koa + @koa/router doing one SQLite insert per request, in the same rounds; absent in reports from before it was measured. */
  ceiling?: { acceptedPerSecond: number; p50Ms: number; p99Ms: number; unexpected: number };
  stores: WriteStore[];
}

/** One store of the history comparison: empty, or holding `finishedJobs` finished jobs. */
export interface HistoryFigure {
  finishedJobs: number;
  seedSeconds: number;
  acceptedPerSecond: number;
  rounds: RoundFigure[];
  p99Ms: number;
  unexpected: number;
  /** Jobs made one at a time once the rounds' jobs were done: created_at to completed_at of the record (whole ms). */
  createToReady: LatencySummary;
  /** The runner's claim on an empty queue, after the rounds. */
  idleClaimMs: number;
}

export interface HistoryStore {
  store: StoreKind;
  empty: HistoryFigure;
  full: HistoryFigure;
  /** Accepted/s with the history over accepted/s without it. */
  acceptedRatio: number | null;
  createToReadyP99Ratio: number | null;
}

/** The write path with and without a long history of finished jobs, in the same rounds. */
export interface HistorySection {
  connections: number;
  roundSeconds: number;
  rounds: number;
  finishedJobs: number;
  engineAvatarMs: number;
  /** Whether each round's jobs were run on both stores before the next round (absent in reports from before). */
  drainedBetweenRounds?: boolean;
  stores: HistoryStore[];
}

export interface JobsStore {
  store: StoreKind;
  backlog: { jobs: number; seconds: number; perSecond: number; workerConcurrency: number };
  /** Jobs made one at a time: created_at to completed_at of the record (whole ms). */
  createToReady: LatencySummary;
  /** POST sent to the avatar.ready webhook received, as a client sees it. */
  postToWebhook: LatencySummary;
}

export interface JobsSection {
  engineAvatarMs: number;
  stores: JobsStore[];
}

export interface WebhooksStore {
  store: StoreKind;
  jobs: number;
  delivered: number;
  seconds: number;
  perSecond: number;
  /** The job's terminal state (event created_at) to receipt at the receiver. */
  lag: LatencySummary;
  /** created_at to completed_at of the same jobs: the runner keeping up at this rate (whole ms). */
  createToReady: LatencySummary;
}

export interface WebhooksSection {
  dispatcher: Record<string, string>;
  /** Jobs created per second (a steady rate below capacity, so the lag is not queueing). */
  rate: number;
  stores: WebhooksStore[];
}

export interface DrainStore {
  store: StoreKind;
  events: number;
  delivered: number;
  /** First to last receipt. */
  seconds: number;
  /** Server spawn to last receipt (includes start-up). */
  secondsFromSpawn: number;
  perSecond: number;
  /** Cores the server process used while draining, and its CPU time per delivery. */
  serverCores: number;
  cpuMsPerDelivery: number;
  /** Who used the machine while draining. */
  cpu?: CpuCores;
  pendingAfter: number;
  profile?: Attribution;
}

export interface DrainSection {
  dispatcher: Record<string, string>;
  /** Receivers (one destination each) the backlog was spread over; absent in reports from before there were several. */
  destinations?: number;
  stores: DrainStore[];
}

export interface KeysCase {
  keys: number;
  requests: number;
  rps: number;
  unexpected: number;
  rssIdleBytes: number;
  rssAfterBytes: number;
  hwmBytes: number;
  /** The JS heap a full collection left after the load (MB, from --trace-gc), or null when none was seen. */
  liveHeapMB: number | null;
}

export interface KeysSection {
  connections: number;
  stores: { store: StoreKind; cases: KeysCase[] }[];
}

/** The conformance proxy's memory after about 1 GB of traffic through it (parts/proxy.ts). */
export interface ProxySection {
  trafficBytes: number;
  largeBodies: number;
  largeBodyBytes: number;
  exchanges: number;
  seconds: number;
  rssIdleBytes: number;
  rssAfterBytes: number;
  peakRssBytes: number;
  hwmBytes: number;
  /** The first answers that were not the expected ones (413 for a large body, 402 for a create, 200 for a read). */
  unexpected: string[];
}

export interface ConformanceSection {
  status: 'measured' | 'not measured';
  reason?: string;
  wallSeconds?: number;
  /** The second of its UTC minute at which the run started: rate-limit windows are aligned on UTC minutes. */
  startSecondOfMinute?: number;
  verdict?: string;
  counts?: Record<string, number>;
  slowest?: { id: string; seconds: number; outcome: string }[];
  /** How the checks that need the sandbox clock ended in the timed run. */
  clockChecks?: { id: string; outcome: string }[];
  /** The checks the timed run failed, with their messages. */
  failed?: { id: string; message: string }[];
  /** The same core run with the clock turned off (windows waited out in real time). */
  withoutClock?: { wallSeconds?: number; verdict?: string; startSecondOfMinute?: number; reason?: string; failed?: { id: string; message: string }[] };
  server: Record<string, string>;
}

/** One file of the built-in engine made on its first download (parts/media.ts). */
export interface MediaFile {
  what: string;
  /** The video's frame; null for the avatar's preview. */
  aspectRatio: string | null;
  /** The video's record's duration_seconds; null for the preview. */
  durationSeconds: number | null;
  bytes: number;
  /** Wall time of the making: a preview's first download, a video's job from create to ready. */
  makeMs: number;
  /** CPU the server used meanwhile, its render and encoder processes included (seconds; 2 cores give at most 2 a second). */
  cpuSeconds: number;
  /**
   * A video's cpuSeconds in each of the jobs made in its frame, in the order made: the
   * figures of this record are those of the job with the median CPU. Absent for the
   * preview, and in reports from before a frame had several jobs.
   */
  cpuSecondsOfJobs?: number[];
  /**
   * Of cpuSeconds, what the render process (drawing, speech) and its encoder (FFmpeg:
   * decoding, filters, x264, AAC) had used when last sampled, each a little under its
   * whole; null when the file needs neither (the preview). The rest is the server's.
   */
  renderCpuSeconds: number | null;
  encoderCpuSeconds: number | null;
  /**
   * Cores the machine's other processes (neither the server with its render processes,
   * nor the benchmark, nor PostgreSQL or Redis) used on average meanwhile: CPU seconds
   * of the same work grow when its processes share their cores.
   */
  otherCores?: number;
  /** Wall time of a download once the file is made (kept by the engine, or by the store for a video). */
  keptMs: number;
  serverRssBeforeBytes: number;
  serverPeakRssBytes: number;
  /** Peak RSS (VmHWM) of the process that renders a video, and of the encoder it starts; null when the file needs none (the preview). */
  renderPeakRssBytes: number | null;
  encoderPeakRssBytes: number | null;
  /** Reads of a record sent one after another while the file was made, and their latency. */
  readsMeanwhile: number;
  readP50Ms: number;
  readMaxMs: number;
}

export interface MediaSection {
  store: StoreKind;
  /** Seconds of the video script measured (30). */
  scriptSeconds: number;
  /** The engine's waits by default (server/src/config.ts), to compare with what making the files costs. */
  engineAvatarMsDefault: number;
  engineVideoMsDefault: number;
  serverRssAfterBytes: number;
  files: MediaFile[];
}

export interface PartStatus {
  part: Part;
  status: 'measured' | 'not measured' | 'skipped' | 'failed';
  seconds?: number;
  reason?: string;
}

export interface VerdictRow {
  id: string;
  target: string;
  measured: string;
  met: boolean | null;
  /** When missed: by how much. */
  margin?: string;
  /** When missed or not measured: why, from the run's own diagnostics. */
  why?: string;
}

export interface BenchReport {
  tool: 'avatar-service-bench';
  schemaVersion: 1;
  mode: 'full' | 'quick';
  command: string;
  startedAt: string;
  finishedAt: string;
  durationSeconds: number;
  machine: Machine;
  commit: Commit;
  sizes: Sizes;
  stores: StoreKind[];
  parts: PartStatus[];
  read?: ReadSection;
  growth?: GrowthSection;
  write?: WriteSection;
  history?: HistorySection;
  jobs?: JobsSection;
  webhooks?: WebhooksSection;
  drain?: DrainSection;
  keys?: KeysSection;
  conformance?: ConformanceSection;
  media?: MediaSection;
  proxy?: ProxySection;
  verdict: VerdictRow[];
  notes: string[];
}
