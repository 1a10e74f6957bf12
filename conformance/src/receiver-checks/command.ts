// `receiver`: flags -> runReceiverConformance -> reports -> exit code, with the same
// reports, last line and exit codes as a service run.
//
//   node conformance/src/cli.ts receiver --url http://127.0.0.1:4000/webhooks --signing-secret whsec_…
import { parseArgs } from 'node:util';
import { WEBHOOK_TOLERANCE_SECONDS } from '../../../contract/webhookSignature.ts';
import type { ImplementationProfile } from '../implementation/profile.ts';
import { profileFlag, Usage } from '../usage.ts';
import { detail, paint, resultLine, summary, warningLines } from '../report/console.ts';
import { writeReports } from '../report/files.ts';
import { senderHar, writeHar } from '../report/har.ts';
import { EXIT_CODES } from '../report/model.ts';
import { DEFAULT_DELIVERY_TIMEOUT_SECONDS, type ReceiverPlan, runReceiverConformance } from './run.ts';
import { formatSeconds } from './sender.ts';

export interface CommandIo {
  out: (text: string) => void;
  err: (text: string) => void;
  command: string;
  env: Record<string, string | undefined>;
  color: boolean;
}

const LAST_LINE_EMPTY = '0 passed, 0 failed, 0 skipped';

export function receiverHelp(command: string): string {
  return `Usage: ${command} receiver --url <receiver URL> --signing-secret <secret> [options]

Plays the sender against your webhook receiver and reports, clause by clause, whether
it verifies deliveries, refuses forged and stale ones, acknowledges duplicates and
takes events of different jobs in any order. Only the given URL is ever contacted.

  --url <url>                   the receiver, as the service would call it [CONFORMANCE_RECEIVER_URL]
  --signing-secret <secret>     the secret the receiver verifies with [CONFORMANCE_SIGNING_SECRET]
  --implementation <file>       the sender the receiver was written for (its implementation
                                profile: header names, signature prefix, envelope);
                                default: this project's contract
  --tolerance <s>               how old a timestamp the receiver accepts (default ${WEBHOOK_TOLERANCE_SECONDS})
  --timeout <s>                 how long each delivery waits for its answer (default ${DEFAULT_DELIVERY_TIMEOUT_SECONDS})
  --only <id|clause>  --skip <id|clause>   run only these checks / leave these out
  --report-json <file>  --report-junit <file>  --report-md <file>  --report-html <file>
  --report-har <file>   every delivery and the receiver's answer, as HAR 1.2, each naming
                        its check in "_check", the signing secret masked
  --verbose  --no-color

Exit codes: 0 pass, 1 fail, 2 usage, 3 unreachable, 6 runner bug.
`;
}

function seconds(name: string, value: string | undefined, fallback: number, minimum: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number < minimum) throw new Usage(`${name} must be a number of seconds${minimum > 0 ? ` above 0` : ''}, got ${JSON.stringify(value)}`);
  return number;
}

function list(values: string[] | undefined): string[] {
  return (values ?? []).flatMap((value) => value.split(',')).map((value) => value.trim()).filter(Boolean);
}

export async function receiverCommand(args: string[], io: CommandIo): Promise<number> {
  const usage = (message: string) => {
    io.err(`usage: ${message} (see ${io.command} receiver --help)\n`);
    io.out(`${LAST_LINE_EMPTY}\n`);
    return EXIT_CODES.usage;
  };
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse(args).values;
  } catch (error) {
    return usage(error instanceof Error ? error.message : String(error));
  }
  if (values.help) {
    io.out(receiverHelp(io.command));
    return 0;
  }
  const url = values.url ?? io.env.CONFORMANCE_RECEIVER_URL;
  const secret = values['signing-secret'] ?? io.env.CONFORMANCE_SIGNING_SECRET;
  let tolerance: number;
  let timeout: number;
  let implementation: ImplementationProfile | undefined;
  try {
    if (!url) throw new Usage('--url is required: the receiver to judge, e.g. http://127.0.0.1:4000/webhooks');
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new Usage(`--url is not a URL: ${url}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Usage(`--url must be an http:// or https:// URL, got ${parsed.protocol}`);
    if (!secret) throw new Usage('--signing-secret is required (or CONFORMANCE_SIGNING_SECRET): the secret the receiver verifies with');
    tolerance = seconds('--tolerance', values.tolerance, WEBHOOK_TOLERANCE_SECONDS, 1);
    timeout = seconds('--timeout', values.timeout, DEFAULT_DELIVERY_TIMEOUT_SECONDS, 0.001);
    if (values.implementation) implementation = profileFlag(values.implementation);
  } catch (error) {
    if (error instanceof Usage) return usage(error.message);
    throw error;
  }

  const color = io.color && !values['no-color'];
  const verbose = Boolean(values.verbose);
  let total = 0;
  let done = 0;
  const sent: NonNullable<Parameters<typeof runReceiverConformance>[0]['sent']> = [];
  const report = await runReceiverConformance({
    sent,
    url,
    signingSecret: secret,
    ...(implementation ? { implementation } : {}),
    toleranceSeconds: tolerance,
    timeoutSeconds: timeout,
    only: list(values.only),
    skip: list(values.skip),
    onStart: (plan) => {
      total = plan.checks.length;
      io.out(startLine(plan, tolerance));
    },
    onProgress: (event) => {
      if (event.type === 'note' && verbose) io.out(paint(color, 90, `    … ${event.message}\n`));
      if (event.type !== 'check-end') return;
      done++;
      io.out(`${resultLine(event.result, color, `${String(done).padStart(String(total).length)}/${total}`)}\n`);
      if (event.result.outcome === 'failed' || (verbose && event.result.reason)) io.out(detail(event.result, color));
      io.out(warningLines(event.result, color));
    },
  });
  writeReports(report, values, io.err);
  writeHar(values['report-har'], () => senderHar(url, sent, [secret], Date.parse(report.startedAt)), io.err);
  io.out(summary(report, color));
  return report.exitCode;
}

/** The first line: what is judged, as whom, and the bound the run keeps. */
function startLine(plan: ReceiverPlan, tolerance: number): string {
  return (
    `Receiver conformance run: ${plan.url}, ${plan.checks.length} checks, sending as ${plan.implementation}, tolerance ${tolerance} s\n` +
    `bound: ${plan.deliveries} deliveries, each answered within ${formatSeconds(plan.timeoutMs)} or counted unanswered; the run ends within ${formatSeconds(plan.boundMs)}\n`
  );
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: false,
    strict: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      url: { type: 'string' },
      'signing-secret': { type: 'string' },
      implementation: { type: 'string' },
      tolerance: { type: 'string' },
      timeout: { type: 'string' },
      only: { type: 'string', multiple: true },
      skip: { type: 'string', multiple: true },
      'report-json': { type: 'string' },
      'report-junit': { type: 'string' },
      'report-md': { type: 'string' },
      'report-html': { type: 'string' },
      'report-har': { type: 'string' },
      verbose: { type: 'boolean', short: 'v' },
      'no-color': { type: 'boolean' },
    },
  });
}
