// Takes queued jobs from the store, runs them on the engine and records the outcome.
// Several runners (threads of one process, or other processes on a shared store) can
// work at once: the store's lease hands each job to one of them.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { finishJob } from '../domain/completion.ts';
import type { DomainDeps } from '../domain/deps.ts';
import type { EngineOutcome, GenerationEngine } from '../domain/engine.ts';
import { generateJob } from '../domain/generation.ts';
import type { Job } from '../domain/model.ts';
import { errorForLog } from '../domain/ports.ts';
import type { Metrics } from '../metrics.ts';
import { createPump } from './pump.ts';

export interface JobRunnerOptions {
  /** Jobs worked on at once by this runner. */
  concurrency: number;
  /** How long a claim lasts without renewal; a dead worker's job is retaken after it. */
  leaseMs: number;
  /** How often to look for work when nobody wakes the runner. */
  pollMs: number;
  /** Claims of one job before it is failed as `interrupted` (a job that kills its worker must not loop). */
  maxAttempts: number;
}

export interface JobRunner {
  start(): void;
  /** Wakes an idle runner: a job was just queued. */
  wake(): void;
  /** Stops claiming; waits up to `graceMs` for jobs in flight, then hands the rest back to the queue. */
  stop(graceMs: number): Promise<void>;
}

export function createJobRunner(deps: DomainDeps, engine: GenerationEngine, options: JobRunnerOptions, log: Logger, metrics?: Metrics): JobRunner {
  const workerId = `worker-${randomUUID()}`;
  const inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  // Accounts with a video rendering here, and how many: a worker renders one video of an
  // account at a time, so that another account's video is claimed (and rendered) beside it
  // rather than queued behind the first account's others. A video counts from its claim
  // until the engine says its render is done (or until it ends, for an engine that does
  // not say): its remaining time does not hold the account's next one back.
  const videosOf = new Map<string, number>();
  const release = (account: string) => {
    const left = (videosOf.get(account) ?? 1) - 1;
    if (left > 0) videosOf.set(account, left);
    else videosOf.delete(account);
  };
  const pump = createPump(
    async () => {
      while (pump.running && inFlight.size < options.concurrency) {
        const now = deps.clock.now();
        // The free slots in one claim: one round trip (and one commit) for several jobs.
        const jobs = await deps.store.jobs.claimJobs(workerId, now, now + options.leaseMs, options.concurrency - inFlight.size, [...videosOf.keys()]);
        if (jobs.length === 0) return;
        for (const job of jobs) void run(job);
      }
    },
    options.pollMs,
    (error) => log.warn({ err: errorForLog(error) }, 'could not claim jobs; retrying'),
  );

  // The jobs that end in one turn of the event loop wake the runner once, after all of
  // them have left their slots: one claim then fills every slot they freed, rather than
  // the first to end claiming one job and the others the rest.
  let wakeScheduled = false;
  function wakeAfterThisTurn(): void {
    if (wakeScheduled) return;
    wakeScheduled = true;
    setImmediate(() => {
      wakeScheduled = false;
      pump.wake();
    });
  }

  async function run(job: Job): Promise<void> {
    const controller = new AbortController();
    let holding = job.kind === 'avatar_video';
    if (holding) videosOf.set(job.accountId, (videosOf.get(job.accountId) ?? 0) + 1);
    const rendered = () => {
      if (!holding) return;
      holding = false;
      release(job.accountId);
      wakeAfterThisTurn();
    };
    const renew = setInterval(() => {
      void deps.store.jobs.renewLease(job.id, workerId, deps.clock.now() + options.leaseMs).catch(() => undefined);
    }, Math.max(50, Math.floor(options.leaseMs / 3)));
    const started = performance.now();
    const done = (async () => {
      let outcome: EngineOutcome;
      try {
        outcome = job.attempts > options.maxAttempts
          ? { status: 'failed', error: { code: 'interrupted', message: 'The job was interrupted too often to be resumed.' } }
          : await generateJob(deps, engine, job, controller.signal, rendered);
      } catch (error) {
        if (controller.signal.aborted) {
          await deps.store.jobs.releaseLease(job.id, workerId, deps.clock.now());
          return;
        }
        log.error({ err: error, jobId: job.id }, 'engine failed');
        outcome = { status: 'failed', error: { code: 'generation_failed', message: 'The engine could not produce the result.' } };
      }
      const changed = await finishJob(deps, job, outcome);
      if (changed) {
        metrics?.jobDuration.observe({ kind: job.kind, status: outcome.status }, (performance.now() - started) / 1000);
        log.info({ jobId: job.id, kind: job.kind, status: outcome.status }, 'job finished');
      }
    })()
      .catch((error) => log.error({ err: errorForLog(error), jobId: job.id }, 'job bookkeeping failed; the lease will expire and another attempt will run'))
      .finally(() => {
        clearInterval(renew);
        inFlight.delete(job.id);
        rendered();
        wakeAfterThisTurn();
      });
    inFlight.set(job.id, { controller, done });
  }

  return {
    start() {
      log.info({ workerId }, 'job runner started');
      pump.start();
    },
    wake: pump.wake,
    async stop(graceMs) {
      await pump.stop(); // a claim under way ends first, so what it claims is waited for too
      const all = Promise.all([...inFlight.values()].map((j) => j.done));
      const grace = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
      await Promise.race([all, grace]);
      for (const job of inFlight.values()) job.controller.abort();
      await all;
    },
  };
}
