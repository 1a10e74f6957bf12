// `proxy`: flags -> the proxy in front of a service -> (SIGINT, SIGTERM or --duration)
// -> judgeTraffic -> reports -> exit code, with the reports, last line and exit codes of
// a service run. Its first line is its URL, for the clients and for scripts.
//
//   node conformance/src/cli.ts proxy --upstream http://127.0.0.1:3000 --listen 8080
import { parseArgs } from 'node:util';
import { MAX_JSON_BODY_BYTES } from '../../../contract/bodyLimit.ts';
import type { ServiceMode } from '../../../contract/webhookUrl.ts';
import { ContractValidator } from '../contract.ts';
import { CONTRACT_PROFILE, type ImplementationProfile } from '../implementation/profile.ts';
import { profileFlag, Usage } from '../usage.ts';
import { Shape } from '../implementation/shape.ts';
import { detail, resultLine, summary } from '../report/console.ts';
import { writeReports } from '../report/files.ts';
import { proxyHar, writeHar } from '../report/har.ts';
import { EXIT_CODES } from '../report/model.ts';
import { counted } from '../report/text.ts';
import { PROXY_CHECKS } from './index.ts';
import { judgeTraffic } from './judge.ts';
import { INJECTED_RETRY_AFTER_SECONDS, startProxy } from './server.ts';

export interface ProxyIo {
  out: (text: string) => void;
  err: (text: string) => void;
  command: string;
  env: Record<string, string | undefined>;
  color: boolean;
  /** Resolves when the user ends the run (SIGINT or SIGTERM on the command line). */
  stopped: Promise<unknown>;
}

const LAST_LINE_EMPTY = '0 passed, 0 failed, 0 skipped';
/** Closing the proxy waits this long at most for exchanges still under way; judging then reads what was recorded. */
const CLOSE_MS = 2000;

export function proxyHelp(command: string): string {
  return `Usage: ${command} proxy --upstream <service URL> --listen <port> [options]

Stands between your client and the service: point the client at the URL it prints
first. Every exchange is passed on unchanged, and webhooks are routed through it to the
receivers the client names. When you stop it (Ctrl-C, SIGTERM) or --duration is over, it
judges, per key, the client (waits after 429, polling backoff, videos only of ready
avatars) and the service (rate-limit headers, records, webhooks) from what it saw.

  --upstream <url>              the service: scheme, host and port, without /v1
  --listen <port>|<host:port>   where the proxy listens (host 127.0.0.1 unless given; 0: any free port)
  --public-url <url>            the address the service must call for webhooks, when it cannot
                                call the proxy's own (e.g. a tunnel to it, for a service that
                                accepts only public HTTPS)
  --service-mode <mode>         the service's mode, whose webhook URL rule a client's webhook_url
                                must keep to be routed through the proxy: sandbox (http:// and
                                loopback or private hosts too, never link-local or metadata ones)
                                or production (https:// on public hosts only). A URL the rule
                                refuses goes to the service as written, which refuses it; the
                                proxy never delivers to it. Default: production with --public-url,
                                sandbox without
  --signing-secret <secret>     verifies the service's webhook signatures. Prefer the environment,
                                CONFORMANCE_SIGNING_SECRET=<secret>: a flag shows in the process
                                list (ps) to every user of the machine
  --implementation <file>       the service's implementation profile (how it presents keys,
                                spells states, errors and requests); default: this project's contract
  --duration <s>                stop and judge after this many seconds
  --inject-429 <share>          answer this share of each key's requests (0 to below 1, e.g.
                                0.2) with a 429 of the proxy's own (Retry-After: ${INJECTED_RETRY_AFTER_SECONDS}), never sent
                                to the service, so the client's handling of 429 is seen
  --report-json <file>  --report-junit <file>  --report-md <file>  --report-html <file>
  --report-har <file>   the traffic seen, as HAR 1.2: each exchange named by its key's label
                        in "_check", each webhook passed on as an entry of its own
  --no-color

A create's body is read up to the service's own limit (${MAX_JSON_BODY_BYTES} bytes) and no further:
a longer one is refused by the service as it would refuse the whole, and the rest is
dropped. Every other body streams through.

Exit codes: 0 pass, 1 fail, 2 usage, 6 runner bug.
`;
}

export async function proxyCommand(args: string[], io: ProxyIo): Promise<number> {
  const usage = (message: string) => {
    io.err(`usage: ${message} (see ${io.command} proxy --help)\n`);
    io.out(`${LAST_LINE_EMPTY}\n`);
    return EXIT_CODES.usage;
  };
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse(args).values;
  } catch (error) {
    // One line, as every usage error: parseArgs explains some errors over three.
    return usage((error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' '));
  }
  if (values.help) {
    io.out(proxyHelp(io.command));
    return 0;
  }
  let upstream: URL;
  let listen: { host: string; port: number };
  let duration: number | undefined;
  let inject = 0;
  let implementation: ImplementationProfile = CONTRACT_PROFILE;
  let serviceMode: ServiceMode;
  try {
    upstream = httpUrl('--upstream', values.upstream, 'the service, e.g. http://127.0.0.1:3000');
    listen = listenOn(values.listen);
    if (values['public-url'] !== undefined) httpUrl('--public-url', values['public-url'], 'the address the service calls for webhooks');
    if (values.duration !== undefined) {
      duration = Number(values.duration);
      if (values.duration.trim() === '' || !Number.isFinite(duration) || duration <= 0) throw new Usage(`--duration must be a number of seconds above 0, got ${JSON.stringify(values.duration)}`);
    }
    if (values['inject-429'] !== undefined) {
      inject = Number(values['inject-429']);
      if (values['inject-429'].trim() === '' || !Number.isFinite(inject) || inject < 0 || inject >= 1) throw new Usage(`--inject-429 must be a share from 0 to below 1, e.g. 0.2, got ${JSON.stringify(values['inject-429'])}`);
    }
    if (values.implementation) implementation = profileFlag(values.implementation);
    const mode = values['service-mode'];
    if (mode !== undefined && mode !== 'sandbox' && mode !== 'production') throw new Usage(`--service-mode must be sandbox or production, got ${JSON.stringify(mode)}`);
    // A service that must call a public address is one that takes only public receivers.
    serviceMode = mode ?? (values['public-url'] === undefined ? 'sandbox' : 'production');
  } catch (error) {
    if (error instanceof Usage) return usage(error.message);
    throw error;
  }
  if (values['signing-secret'] !== undefined) {
    io.err('warning: --signing-secret shows in the process list (ps) to every user of this machine; set CONFORMANCE_SIGNING_SECRET in the environment instead\n');
  }
  const secret = values['signing-secret'] ?? io.env.CONFORMANCE_SIGNING_SECRET;
  const shape = new Shape(implementation);
  const startedAt = Date.now();
  // Loaded apart from the listen below, so that a broken contract is not reported as a port.
  const validator = ContractValidator.load();
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  try {
    proxy = await startProxy({
      upstream: upstream.toString(),
      host: listen.host,
      port: listen.port,
      ...(values['public-url'] ? { publicUrl: values['public-url'] } : {}),
      shape,
      validator,
      inject429: inject,
      serviceMode,
    });
  } catch (error) {
    return usage(`--listen ${values.listen}: cannot listen there (${error instanceof Error ? error.message : String(error)})`);
  }
  const origin = upstream.toString().replace(/\/+$/, '');
  io.out(`Conformance proxy: ${proxy.url} -> ${origin}\n`);
  io.out(
    `judging ${counted(PROXY_CHECKS.length, 'check')} per key (client and service) until SIGINT or SIGTERM${duration === undefined ? '' : ` or ${duration} s`}; ` +
      `webhooks routed through ${proxy.webhookBase}… when the ${serviceMode} rule allows the client's webhook_url; ` +
      (inject > 0 ? `${+(inject * 100).toFixed(2)} % of each key's rate-limited requests answered 429 by the proxy (--inject-429), the rest passed on unchanged` : 'every request passed on unchanged') +
      `; once stopped, exchanges under way get ${CLOSE_MS / 1000} s, then the verdict\n`,
  );

  let timer: NodeJS.Timeout | undefined;
  const over = duration === undefined ? new Promise<void>(() => undefined) : new Promise<void>((resolve) => (timer = setTimeout(resolve, duration * 1000)));
  await Promise.race([io.stopped, over]);
  clearTimeout(timer);
  // Exchanges still under way get a moment to finish; judging does not wait for more.
  await Promise.race([proxy.close(), new Promise((resolve) => setTimeout(resolve, CLOSE_MS).unref())]);

  const report = judgeTraffic({ traffic: proxy.traffic, shape, upstream: origin, signingSecret: secret, startedAt });
  const color = io.color && !values['no-color'];
  report.results.forEach((result, i) => {
    io.out(`${resultLine(result, color, `${String(i + 1).padStart(String(report.results.length).length)}/${report.results.length}`)}\n`);
    if (result.outcome === 'failed' || result.outcome === 'warned' || result.outcome === 'not_applicable') io.out(detail(result, color));
  });
  writeReports(report, values, io.err);
  writeHar(values['report-har'], () => proxyHar(proxy.traffic, origin, secret ? [secret] : []), io.err);
  io.out(summary(report, color));
  return report.exitCode;
}

function httpUrl(flag: string, value: string | undefined, what: string): URL {
  if (!value) throw new Usage(`${flag} is required: ${what}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Usage(`${flag} is not a URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Usage(`${flag} must be an http:// or https:// URL, got ${url.protocol}`);
  return url;
}

function listenOn(value: string | undefined): { host: string; port: number } {
  if (value === undefined) throw new Usage('--listen is required: the port the proxy listens on (0: any free port)');
  const match = /^(?:(.+):)?(\d+)$/.exec(value.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || !Number.isInteger(port) || port > 65535) throw new Usage(`--listen must be a port from 0 to 65535, or host:port, got ${JSON.stringify(value)}`);
  return { host: match[1]?.replace(/^\[|\]$/g, '') ?? '127.0.0.1', port };
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: false,
    strict: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      upstream: { type: 'string' },
      listen: { type: 'string' },
      'public-url': { type: 'string' },
      'service-mode': { type: 'string' },
      'signing-secret': { type: 'string' },
      implementation: { type: 'string' },
      duration: { type: 'string' },
      'inject-429': { type: 'string' },
      'report-json': { type: 'string' },
      'report-junit': { type: 'string' },
      'report-md': { type: 'string' },
      'report-html': { type: 'string' },
      'report-har': { type: 'string' },
      'no-color': { type: 'boolean' },
    },
  });
}
