#!/usr/bin/env node
// The command line: flags -> runConformance -> reports -> exit code.
//
//   node conformance/src/cli.ts --base-url http://localhost:3000 --api-key sk_test_… \
//     --signing-secret whsec_… [--second-key …] [--empty-key …] [--profile core]
//
// Exit codes: 0 no check failed and every required check ran (an optional one may have
// warned); 1 a check failed or a required one did not run; 2 bad usage; 3 base URL unreachable; 4 a key was refused; 5 not this API;
// 6 a bug in the runner; compare exits 0 without a regression, 1 with one, 2 on bad usage.
// Diagnoses are one line, never a stack trace. Once the reports are written the process
// exits with its code, whatever sockets or timers are still open.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { liveRefusal, overBudget, plannedBudget } from './budget.ts';
import { CHECKS } from './checks/index.ts';
import { draftCommand } from './implementation/draft-command.ts';
import { CONTRACT_PROFILE, loadProfile, ProfileError, UNSTATED_TIMINGS, type ImplementationProfile } from './implementation/profile.ts';
import { Shape } from './implementation/shape.ts';
import { CONTRACT_FIRST_RETRY_SECONDS, CONTRACT_LIMITS, CONTRACT_WINDOW_SECONDS, resolveOptions, type RunOptions } from './options.ts';
import { CREDIT_COSTS, WEBHOOK_DELIVERY } from '../../contract/numbers.ts';
import { creditsFor } from './preflight.ts';
import { PROFILES, type Profile } from './outcome.ts';
import { proxyCommand } from './proxy/command.ts';
import { receiverCommand } from './receiver-checks/command.ts';
import { compareCommand } from './report/compare.ts';
import { consoleProgress, summary } from './report/console.ts';
import { writeReports } from './report/files.ts';
import { runHar, writeHar } from './report/har.ts';
import { listMatrix } from './report/markdown.ts';
import { EXIT_CODES } from './report/model.ts';
import { counted } from './report/text.ts';
import { runConformance } from './run.ts';
import { missingValues, selectChecks, type MissingValue } from './selection.ts';

/** How the user ran this: the package's command, or the script in a clone. */
const COMMAND = import.meta.url.endsWith('.js') ? 'avatar-conformance' : 'node conformance/src/cli.ts';

const HELP = `Usage: ${COMMAND} --base-url <url> --api-key <key> [options]
       ${COMMAND} draft-profile <openapi file or URL> [--name <name>] [--output <file>]
       ${COMMAND} receiver --url <receiver URL> --signing-secret <secret> [options]
       ${COMMAND} proxy --upstream <service URL> --listen <port> [options]
       ${COMMAND} compare <before.json> <after.json>

Drives an implementation of the Avatar Service API over HTTP and reports, clause by
clause, what holds. draft-profile drafts an implementation profile from the
implementation's own OpenAPI document, for review. receiver plays the sender against a
webhook receiver and judges it (receiver --help lists its options). proxy stands
between a client and a service and judges both from the live traffic (proxy --help).

Keys and secrets (flags, or the environment variables in brackets):
  --base-url <url>              scheme, host and port, without /v1 [CONFORMANCE_BASE_URL]
  --api-key <key>               key of an account with at least ${creditsFor(CREDIT_COSTS)} credits available (the
                                run's shared jobs; "budget:" on the start line states the
                                most the selected checks could spend) [CONFORMANCE_API_KEY]
  --second-key <key>            key of another account [CONFORMANCE_SECOND_KEY]
  --empty-key <key>             key of an account without credits [CONFORMANCE_EMPTY_KEY]
  --workspace-key <key>         key of a workspace with credits for an avatar [CONFORMANCE_WORKSPACE_KEY]
  --owner-key <key>             key of that workspace's owner account [CONFORMANCE_OWNER_KEY]
                                (both or neither; without them credits.workspace-charged
                                is not applicable)
  --signing-secret <secret>     the webhook signing secret [CONFORMANCE_SIGNING_SECRET]
  --standard-webhooks           the --api-key account also gets Standard Webhooks headers
                                (webhook-id, -timestamp, -signature): check them too
  A run whose required checks need one of these that it was not given is refused before
  any request (exit 2), one line per value; --skip leaves those checks out.

What to run:
  --profile core|contract|production|mock   default core
  --only <id|area|clause|tag>   run only these (repeatable, comma lists, * wildcards)
  --skip <id|area|clause|tag>   leave these out
  --list                        print the clause-to-check matrix and exit
  --config <file.json>          options as JSON (camelCase names of the flags)

The implementation under test:
  --implementation <file>       its implementation profile (YAML or JSON): how it made the
                                source's "not shown" choices; default: this project's contract
  --fail-marker <text>          makes a job fail, in the name and the script (default: the
                                profile's failure; "[sandbox:fail]", not in production)
  --no-fail-marker              the implementation has no way to force a failure
  --photo-url <url>             the portrait photo avatars point at
  --job-timeout <s>             longest a job of either kind may take (default: the
                                profile's timings, for the contract ${CONTRACT_PROFILE.timings!.jobSeconds.avatar} s an avatar and
                                ${CONTRACT_PROFILE.timings!.jobSeconds.avatar_video} s a video; ${UNSTATED_TIMINGS.jobSeconds.avatar} s for a profile that states none)
  --expect-generation-limits <n,n>  accepted generation RateLimit-Limit values (default ${CONTRACT_LIMITS.generation.join(',')})
  --expect-read-limits <n,n>    accepted read RateLimit-Limit values (default ${CONTRACT_LIMITS.read.join(',')})
  --expect-windows <s,s>        the window in seconds of each expected limit (default ${CONTRACT_WINDOW_SECONDS.join(',')})
  --webhook-first-retry <s>     the first retry delay the contract promises (default ${CONTRACT_FIRST_RETRY_SECONDS})
  --webhook-retry-timeout <s>   longest a webhook attempt may come after it is due: after
                                its job ended, at its retry's moment (default: the profile's
                                timings, for the contract ${CONTRACT_PROFILE.timings!.deliverySeconds} s; ${UNSTATED_TIMINGS.deliverySeconds} s for a profile that states none)
  --webhook-retries <s,s,...>   the wait before each retry, checked whole with a sandbox
                                clock (default: the profile's; the contract's ${WEBHOOK_DELIVERY.retryDelaysSeconds.join(',')})
  --webhook-retry-jitter <f>    how far each wait may stray, as a fraction (default ${WEBHOOK_DELIVERY.jitter}
                                with the contract's schedule, else 0)

The webhook receiver:
  --receiver-host <host>        where it listens (default 127.0.0.1)
  --receiver-port <port>        default: any free port
  --receiver-public-url <url>   the URL the service must call, if not http://host:port
  To run without webhooks, --skip receiver: the checks that need them are left out and
  no signing secret is asked for (--no-receiver is a deprecated alias of it).

Sandbox clock (where the implementation profile names one, e.g. this contract's):
  --no-clock                    wait rate-limit windows out in real time; the checks
                                that need the clock are reported as not run

Generated inputs (sent with --empty-key, after everything else):
  --fuzz <n>                    also send n requests generated from the request schemas
                                (creates and reads), each judged by what it must get; a
                                failure is shrunk to its smallest request
  --seed <n>                    the seed of those requests (default: a new one, printed);
                                the same seed makes the same requests

Reports:
  --report-json <file>  --report-junit <file>  --report-md <file>
  --report-html <file>  one self-contained page: the clause matrix, each check with the
                        exchanges of its failure, and pictures of the webhook attempts, each
                        key's RateLimit-Remaining and the job durations (opens offline)
  --report-har <file>   every exchange of the run and every webhook its receiver got, as
                        HAR 1.2 (a browser's network panel opens it); each entry names its
                        check in "_check", keys and secrets masked
  --verbose             also print waits and skip reasons as they happen
  --no-color

Credits (each check declares the creates it may make; the run states the total first, as
"budget: at most N credits": every create counted as charged, the rate-limit checks' too,
which use a window up and which a correct service refuses with 429 unpaid, so a run
spends far less; a core run with the contract's prices states ${coreBudget()} and against this
project's server spends under 100):
  --max-credits <n>     refuse to start (exit 2) when the selected checks may spend more;
                        required on a live key (the production profile, or GET /v1/me
                        saying the key is live)

Comparing two runs:
  ${COMMAND} compare <before.json> <after.json>
                        what changed between two --report-json files; exit 0 when nothing
                        regressed, 1 when a check newly fails, a required check no longer
                        passes or disappeared, 2 when a file cannot be read

The bound (the start line's "ends within N s"): an upper limit, not an estimate: what a
correct implementation with the profile's timings needs at most, end to end: its shared jobs (an avatar, then its video and the
first webhook retry), then phase by phase the longest lane: two rate-limit windows (a move
of the sandbox clock, or the window waited out) and, for each check, a step and the waits
it declares (the jobs, deliveries and retries it awaits, each at the timings' longest);
no request at its timeout. It counts on the sandbox clock the profile names; keys without
one are bound anew, waiting windows out. With the contract's timings a core run against
this project's server states 117 s and takes 25-26 s. The run stops at its bound: the checks
not reached are reported not run. Each check has its own limit within it.

Exit codes: 0 pass, 1 fail, 2 usage, 3 unreachable, 4 key refused, 5 not this API, 6 runner bug.
`;

/** What a core run with every value and the contract's prices states as its budget, in credits. */
function coreBudget(): number | undefined {
  const options = resolveOptions({ baseUrl: 'http://127.0.0.1', apiKey: 'sk_test_help', secondKey: 'sk_test_help2', emptyKey: 'sk_test_help3', signingSecret: 'whsec_help', workspaceKey: 'sk_test_help4', ownerKey: 'sk_test_help5', profile: 'core' });
  return plannedBudget(selectChecks(CHECKS, options), options, new Shape(options.implementation)).credits;
}

const LAST_LINE_EMPTY = '0 passed, 0 failed, 0 skipped';
/** How long the last output may take to drain into a pipe before the process exits without it. */
const EXIT_FLUSH_MS = 2000;

function usage(message: string): never {
  process.stderr.write(`usage: ${message} (see --help)\n`);
  process.stdout.write(`${LAST_LINE_EMPTY}\n`);
  process.exit(EXIT_CODES.usage);
}

/** Where each value a run may lack comes from, what it is, and how to run without it. */
const PROVIDED_BY: Record<MissingValue['value'], { flag: string; env: string; what: string; without: string }> = {
  'second-key': { flag: '--second-key', env: 'CONFORMANCE_SECOND_KEY', what: 'a key of another account', without: '--skip second-key' },
  'empty-key': { flag: '--empty-key', env: 'CONFORMANCE_EMPTY_KEY', what: 'a key of an account without credits', without: '--skip empty-key' },
  'signing-secret': { flag: '--signing-secret', env: 'CONFORMANCE_SIGNING_SECRET', what: "the --api-key account's webhook signing secret", without: '--skip receiver' },
};

/** One line per value the required checks need and were not given, before any request is sent. */
function refuseMissing(missing: MissingValue[], profile: Profile): never {
  for (const { value, checks } of missing) {
    const { flag, env, what, without } = PROVIDED_BY[value];
    const shown = checks.length > 3 ? `${checks.slice(0, 3).join(', ')} and ${checks.length - 3} more` : checks.join(', ');
    process.stderr.write(`usage: ${flag} (or ${env}) is missing: ${what}, needed by ${counted(checks.length, 'required check')} of the ${profile} profile (${shown}); ${without} leaves ${checks.length === 1 ? 'it' : 'them'} out\n`);
  }
  process.stdout.write(`${LAST_LINE_EMPTY}\n`);
  process.exit(EXIT_CODES.usage);
}

function list(values: string[] | undefined): string[] {
  return (values ?? []).flatMap((value) => value.split(',')).map((value) => value.trim()).filter(Boolean);
}

function seconds(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0) usage(`${name} must be a number of seconds, got ${JSON.stringify(value)}`);
  return number;
}

function numbers(name: string, value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  const parsed = list([value]).map(Number);
  if (parsed.length === 0 || parsed.some((n) => !Number.isInteger(n) || n < 0)) usage(`${name} must be a comma list of integers`);
  return parsed;
}

function integer(name: string, value: string | undefined, max: number): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number > max) usage(`${name} must be an integer from 0 to ${max}, got ${JSON.stringify(value)}`);
  return number;
}

function fuzzCount(value: string | undefined): number | undefined {
  const count = integer('--fuzz', value, 1_000_000);
  if (count !== undefined && count < 1) usage('--fuzz must be a number of requests, at least 1');
  return count;
}

function retrySchedule(delays: string | undefined, jitter: string | undefined): { delaysSeconds: number[]; jitter: number } | undefined {
  if (delays === undefined) {
    if (jitter !== undefined) usage('--webhook-retry-jitter needs --webhook-retries');
    return undefined;
  }
  const delaysSeconds = list([delays]).map(Number);
  if (delaysSeconds.length === 0 || delaysSeconds.some((n) => !Number.isFinite(n) || n <= 0)) usage('--webhook-retries must be a comma list of positive numbers of seconds');
  const fraction = jitter === undefined ? 0 : Number(jitter);
  if (!Number.isFinite(fraction) || fraction < 0 || fraction >= 1) usage(`--webhook-retry-jitter must be a fraction from 0 to below 1, e.g. ${WEBHOOK_DELIVERY.jitter}`);
  return { delaysSeconds, jitter: fraction };
}

async function main(): Promise<number> {
  if (process.argv[2] === 'draft-profile') {
    return draftCommand(process.argv.slice(3), { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) });
  }
  if (process.argv[2] === 'receiver') {
    const io = { out: (text: string) => void process.stdout.write(text), err: (text: string) => void process.stderr.write(text), command: COMMAND, env: process.env, color: Boolean(process.stdout.isTTY) && !process.env.NO_COLOR };
    // A receiver run ends once its reports are written, whatever a receiver still holds open.
    return receiverCommand(process.argv.slice(3), io).then((code) => process.exit(code));
  }
  if (process.argv[2] === 'compare') {
    return compareCommand(process.argv.slice(3), { out: (text) => void process.stdout.write(text), err: (text) => void process.stderr.write(text), command: COMMAND });
  }
  if (process.argv[2] === 'proxy') {
    const stopped = new Promise((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    const io = { out: (text: string) => void process.stdout.write(text), err: (text: string) => void process.stderr.write(text), command: COMMAND, env: process.env, color: Boolean(process.stdout.isTTY) && !process.env.NO_COLOR, stopped };
    // exit() below ends the process once the reports are written, whatever a client still holds open.
    return proxyCommand(process.argv.slice(3), io);
  }
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse();
  } catch (error) {
    usage(error instanceof Error ? error.message : String(error));
  }
  const { values } = parsed;
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (values.list) {
    process.stdout.write(listMatrix(CHECKS));
    return 0;
  }

  let config: Partial<RunOptions> = {};
  if (values.config) {
    try {
      config = JSON.parse(readFileSync(values.config, 'utf8')) as Partial<RunOptions>;
    } catch (error) {
      usage(`cannot read --config ${values.config}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const env = process.env;
  const baseUrl = values['base-url'] ?? config.baseUrl ?? env.CONFORMANCE_BASE_URL;
  const apiKey = values['api-key'] ?? config.apiKey ?? env.CONFORMANCE_API_KEY;
  if (!baseUrl) usage('--base-url is required');
  if (!apiKey) usage('--api-key is required');
  try {
    new URL(baseUrl);
  } catch {
    usage(`--base-url is not a URL: ${baseUrl}`);
  }
  const profile = (values.profile ?? config.profile ?? 'core') as Profile;
  if (!PROFILES.includes(profile)) usage(`--profile must be one of ${PROFILES.join(', ')}`);
  let implementation: ImplementationProfile | undefined;
  const implementationFile = values.implementation ?? (config as { implementationFile?: string }).implementationFile;
  if (implementationFile) {
    try {
      implementation = loadProfile(implementationFile);
    } catch (error) {
      if (error instanceof ProfileError) usage(error.message);
      throw error;
    }
    // The contract and mock profiles judge this project's own choices.
    if (profile === 'contract' || profile === 'mock') usage(`--profile ${profile} judges this project's contract; an implementation profile is for the core and production profiles`);
  }

  const color = !values['no-color'] && Boolean(process.stdout.isTTY) && !env.NO_COLOR;
  if (values['no-receiver']) process.stderr.write('note: --no-receiver is deprecated: it means --skip receiver (the checks that need webhooks are left out, and no signing secret is asked for); write --skip receiver\n');
  const receiverPort = values['receiver-port'] === undefined ? undefined : Number(values['receiver-port']);
  if (receiverPort !== undefined && (!Number.isInteger(receiverPort) || receiverPort < 0 || receiverPort > 65535)) usage('--receiver-port must be a port number');

  const options: RunOptions = {
    ...config,
    baseUrl,
    apiKey,
    profile,
    ...(implementation ? { implementation } : {}),
    secondKey: values['second-key'] ?? config.secondKey ?? env.CONFORMANCE_SECOND_KEY,
    emptyKey: values['empty-key'] ?? config.emptyKey ?? env.CONFORMANCE_EMPTY_KEY,
    workspaceKey: values['workspace-key'] ?? config.workspaceKey ?? env.CONFORMANCE_WORKSPACE_KEY,
    ownerKey: values['owner-key'] ?? config.ownerKey ?? env.CONFORMANCE_OWNER_KEY,
    signingSecret: values['signing-secret'] ?? config.signingSecret ?? env.CONFORMANCE_SIGNING_SECRET,
    ...(values['standard-webhooks'] ? { standardWebhooks: true } : {}),
    only: [...(config.only ?? []), ...list(values.only)],
    // --no-receiver is kept for the commands already written with it, as --skip receiver.
    skip: [...(config.skip ?? []), ...list(values.skip), ...(values['no-receiver'] ? ['receiver'] : [])],
    ...(values['no-fail-marker'] ? { failMarker: null } : values['fail-marker'] !== undefined ? { failMarker: values['fail-marker'] } : {}),
    ...(values['no-clock'] ? { clock: false } : {}),
    ...(values['no-receiver']
      ? { receiver: false as const }
      : {
          receiver: {
            ...(config.receiver || {}),
            ...(values['receiver-host'] ? { host: values['receiver-host'] } : {}),
            ...(receiverPort !== undefined ? { port: receiverPort } : {}),
            ...(values['receiver-public-url'] ? { publicUrl: values['receiver-public-url'] } : {}),
          },
        }),
    ...defined({
      photoUrl: values['photo-url'],
      jobTimeoutSeconds: seconds('--job-timeout', values['job-timeout']),
      webhookFirstRetrySeconds: seconds('--webhook-first-retry', values['webhook-first-retry']),
      webhookRetryTimeoutSeconds: seconds('--webhook-retry-timeout', values['webhook-retry-timeout']),
      openapiPath: values.openapi,
      fuzz: fuzzCount(values.fuzz),
      seed: integer('--seed', values.seed, 0x7fff_ffff),
      windowSeconds: numbers('--expect-windows', values['expect-windows']),
      webhookRetries: retrySchedule(values['webhook-retries'], values['webhook-retry-jitter']),
    }),
    expectedLimits: {
      ...(config.expectedLimits ?? {}),
      ...defined({ generation: numbers('--expect-generation-limits', values['expect-generation-limits']), read: numbers('--expect-read-limits', values['expect-read-limits']) }),
    },
    onProgress: consoleProgress({ stream: process.stdout, color, verbose: Boolean(values.verbose) }),
  };

  const maxCredits = integer('--max-credits', values['max-credits'] ?? (config.maxCredits === undefined ? undefined : String(config.maxCredits)), 1_000_000_000);
  if (maxCredits !== undefined) options.maxCredits = maxCredits;
  // Read as the run would read them (an empty value is none).
  const resolved = resolveOptions(options);
  if (Boolean(resolved.workspaceKey) !== Boolean(resolved.ownerKey)) {
    usage(`${resolved.workspaceKey ? '--owner-key (or CONFORMANCE_OWNER_KEY)' : '--workspace-key (or CONFORMANCE_WORKSPACE_KEY)'} is missing: --workspace-key and --owner-key are given together, a workspace's key and its owner account's`);
  }
  const missing = missingValues(CHECKS, resolved);
  if (missing.length > 0) refuseMissing(missing, profile);
  // What the run may spend is known from the selection and the prices: refused before any request.
  const planned = plannedBudget(selectChecks(CHECKS, resolved), resolved, new Shape(resolved.implementation));
  const overspend = overBudget(planned, maxCredits);
  if (overspend) usage(overspend);
  const live = profile === 'production' && maxCredits === undefined ? liveRefusal(planned, 'the production profile runs on a live key') : undefined;
  if (live) usage(live);

  const traffic: Parameters<typeof runConformance>[1] = { baseUrl, exchanges: [], deliveries: [], secrets: [] };
  const report = await runConformance(options, traffic);
  writeReports(report, values, (text) => process.stderr.write(text));
  writeHar(values['report-har'], () => runHar(traffic!), (text) => process.stderr.write(text));
  process.stdout.write(summary(report, color));
  return report.exitCode;
}

function parse() {
  return parseArgs({
    allowPositionals: false,
    strict: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      list: { type: 'boolean' },
      config: { type: 'string' },
      'base-url': { type: 'string' },
      'api-key': { type: 'string' },
      'second-key': { type: 'string' },
      'empty-key': { type: 'string' },
      'workspace-key': { type: 'string' },
      'owner-key': { type: 'string' },
      'signing-secret': { type: 'string' },
      'standard-webhooks': { type: 'boolean' },
      profile: { type: 'string' },
      only: { type: 'string', multiple: true },
      skip: { type: 'string', multiple: true },
      'fail-marker': { type: 'string' },
      'no-fail-marker': { type: 'boolean' },
      'photo-url': { type: 'string' },
      'job-timeout': { type: 'string' },
      'webhook-first-retry': { type: 'string' },
      'webhook-retry-timeout': { type: 'string' },
      'webhook-retries': { type: 'string' },
      'webhook-retry-jitter': { type: 'string' },
      'expect-generation-limits': { type: 'string' },
      'expect-read-limits': { type: 'string' },
      'expect-windows': { type: 'string' },
      implementation: { type: 'string' },
      'receiver-host': { type: 'string' },
      'receiver-port': { type: 'string' },
      'receiver-public-url': { type: 'string' },
      'no-receiver': { type: 'boolean' },
      'no-clock': { type: 'boolean' },
      fuzz: { type: 'string' },
      seed: { type: 'string' },
      openapi: { type: 'string' },
      'report-json': { type: 'string' },
      'report-junit': { type: 'string' },
      'report-md': { type: 'string' },
      'report-html': { type: 'string' },
      'report-har': { type: 'string' },
      'max-credits': { type: 'string' },
      verbose: { type: 'boolean', short: 'v' },
      'no-color': { type: 'boolean' },
    },
  });
}

function defined<T extends Record<string, unknown>>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/**
 * Ends the process with the verdict's code once its output is out. The run closes what it
 * opened, but the verdict does not depend on it: a socket kept alive by the service or a
 * timer of a wait cut short must not keep the process (and a CI job) going.
 */
function exit(code: number): void {
  process.exitCode = code;
  setTimeout(() => process.exit(code), EXIT_FLUSH_MS).unref();
  // An empty write's callback comes once every write before it is flushed.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}

main().then(exit, (error: unknown) => {
  process.stderr.write(`internal error in the runner: ${error instanceof Error ? error.message : String(error)}\n`);
  process.stdout.write(`${LAST_LINE_EMPTY}\n`);
  exit(EXIT_CODES.internal);
});
