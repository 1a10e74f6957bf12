// A failure's reproduction: the shortest sequence of shell commands that shows it again,
// runnable as printed. Each exchange the failure cites is one `curl` command; a key is
// the environment variable the runner reads it from ($CONFORMANCE_API_KEY, …), never the
// key itself; everything else is single-quoted, so no character of a body or a path is
// read by the shell. A webhook is shown as the delivery the receiver got: a `curl` that
// sends it again to a receiver ($RECEIVER_URL) and one that recomputes its signature from
// $CONFORMANCE_SIGNING_SECRET, to compare with the header it carried.
import { redact } from '../../../contract/secrets.ts';
import { WEBHOOK_SIGNATURE_HEADER, WEBHOOK_SIGNATURE_PREFIX, WEBHOOK_TIMESTAMP_HEADER } from '../../../contract/webhookSignature.ts';
import type { Exchange, KeyName } from '../http.ts';
import type { Delivery } from '../receiver/server.ts';

/** Where each key is read from, as --help names them. */
export const KEY_VARIABLES: Record<KeyName, string> = {
  main: 'CONFORMANCE_API_KEY',
  second: 'CONFORMANCE_SECOND_KEY',
  empty: 'CONFORMANCE_EMPTY_KEY',
  workspace: 'CONFORMANCE_WORKSPACE_KEY',
  owner: 'CONFORMANCE_OWNER_KEY',
};
export const SECRET_VARIABLE = 'CONFORMANCE_SIGNING_SECRET';
/** A made-up key is no secret, but the runner does not keep it: any token of that shape shows the same refusal. */
const MADE_UP_TOKEN = 'sk_test_madeUpByTheConformanceRunner';
/** The most commands one failure shows: its first exchanges are the ones that show it. */
const MAX_COMMANDS = 5;
/** Headers a curl sends by itself, or that say nothing of the failure. */
const LEFT_OUT = new Set(['accept', 'content-length', 'host', 'connection', 'user-agent']);

/** A word the shell reads as it is written: single quotes, and each single quote closed, escaped and reopened. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** One exchange as the curl command that sends it again; `secrets` are masked in whatever the command still holds. */
export function curlOf(exchange: Exchange, baseUrl: string, secrets: readonly string[] = []): string {
  const words = ['curl', '-sS', '-i'];
  if (exchange.method === 'HEAD') words.push('--head');
  else if (exchange.method !== 'GET') words.push('-X', exchange.method);
  words.push(shellQuote(baseUrl.replace(/\/+$/, '') + exchange.path));
  for (const [name, value] of Object.entries(exchange.requestHeaders)) {
    if (LEFT_OUT.has(name)) continue;
    if (value.includes('…(redacted)')) {
      // The credential: its scheme kept, the key read from the environment when it runs.
      const scheme = /^(\S+)\s+\S/.exec(value)?.[1];
      const token = exchange.key === 'made-up' ? MADE_UP_TOKEN : exchange.key === 'none' ? '' : `$${KEY_VARIABLES[exchange.key]}`;
      words.push('-H', `"${name}: ${scheme ? `${scheme} ` : ''}${token}"`);
      continue;
    }
    words.push('-H', shellQuote(`${name}: ${value}`));
  }
  if (exchange.requestBody !== undefined) words.push('--data-raw', shellQuote(exchange.requestBody));
  return redact(words.join(' '), secrets);
}

/** A delivery the receiver got: sent again to $RECEIVER_URL as it came, and its signature recomputed. */
export function deliveryCommands(delivery: Delivery, secrets: readonly string[] = []): string[] {
  const words = ['curl', '-sS', '-i', '-X', delivery.method, '"$RECEIVER_URL"'];
  for (const [name, value] of Object.entries(delivery.headers)) {
    if (LEFT_OUT.has(name)) continue;
    words.push('-H', shellQuote(`${name}: ${value}`));
  }
  words.push('--data-raw', shellQuote(delivery.rawBody));
  const commands = [redact(words.join(' '), secrets)];
  const timestamp = delivery.headers[WEBHOOK_TIMESTAMP_HEADER.toLowerCase()];
  const signature = delivery.headers[WEBHOOK_SIGNATURE_HEADER.toLowerCase()];
  if (timestamp !== undefined) {
    // HMAC-SHA256 of "<timestamp>.<body>" keyed with the secret as text (WH-SIGNATURE): printf '%s' sends the bytes as they came.
    commands.push(
      redact(`printf '%s.%s' ${shellQuote(timestamp)} ${shellQuote(delivery.rawBody)} | openssl dgst -sha256 -hmac "$${SECRET_VARIABLE}" | sed 's/^.* /${WEBHOOK_SIGNATURE_PREFIX}/'  # the delivery carried ${WEBHOOK_SIGNATURE_HEADER}: ${signature ?? '(none)'}`, secrets),
    );
  }
  return commands;
}

/**
 * The commands that show a failure: those of the exchanges it cites (or, when it cites
 * none, the last exchange its check made), then the deliveries it is about.
 */
export function reproduction(cited: readonly Exchange[], ownLast: Exchange | undefined, deliveries: readonly Delivery[], baseUrl: string, secrets: readonly string[]): string[] {
  const exchanges = cited.length > 0 ? cited : ownLast ? [ownLast] : [];
  const commands = exchanges.slice(0, MAX_COMMANDS).map((exchange) => curlOf(exchange, baseUrl, secrets));
  for (const delivery of deliveries.slice(0, Math.max(1, MAX_COMMANDS - commands.length))) commands.push(...deliveryCommands(delivery, secrets));
  return commands;
}

/**
 * The deliveries a failure is about: those whose body holds an ID (or event ID) its words
 * name, the latest first, at most two. A webhook check's failure names the job or event.
 */
export function citedDeliveries(texts: readonly (string | undefined)[], deliveries: readonly Delivery[]): Delivery[] {
  const words = texts.filter((text): text is string => text !== undefined).join('\n');
  const ids = new Set(words.match(/\b[a-z]{2,5}_[A-Za-z0-9]{8,}\b/g) ?? []);
  if (ids.size === 0) return [];
  return deliveries.filter((delivery) => [...ids].some((id) => delivery.rawBody.includes(id))).slice(-2).reverse();
}

/**
 * A delivery the runner sent a receiver (a receiver run), as the curl that sends it again:
 * its headers as they went, the signature among them, which a receiver checks against
 * its own clock (a stale timestamp is then refused, as it should be).
 */
export function resendCommand(url: string, headers: readonly (readonly [string, string])[], body: string, secrets: readonly string[] = []): string {
  const words = ['curl', '-sS', '-i', '-X', 'POST', shellQuote(url)];
  for (const [name, value] of headers) if (!LEFT_OUT.has(name.toLowerCase())) words.push('-H', shellQuote(`${name}: ${value}`));
  words.push('--data-raw', shellQuote(body));
  return redact(words.join(' '), secrets);
}
