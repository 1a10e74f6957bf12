// The contract's numbers in the Markdown docs. A number the docs state is written inside
// a span, `<!-- n:limits.read -->…<!-- /n -->` around the number, whose text
// `npm run generate` rewrites from the bundle (and `npm run check:generated` finds stale),
// so a change of an x- member in openapi/ reaches the docs without another edit. The
// comments do not show when the Markdown is rendered.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { creditCosts, fileLinks, formatNumber, monthlyCredits, rateLimitBuckets, webhookDelivery } from '../contract/readNumbers.ts';
import type { JsonObject } from '../contract/schemas.ts';

/** The Markdown files whose spans are filled, relative to the repository's root: the READMEs and the guides of docs/. */
export const NUMBER_DOCS: readonly string[] = [
  'README.md',
  'openapi/README.md',
  'conformance/README.md',
  ...readdirSync(join(import.meta.dirname, '..', 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

const SPAN = /<!-- n:([\w.]+) -->([\s\S]*?)<!-- \/n -->/g;

/** Seconds as the docs write a list of waits: "3 s, 9 s and 1,000 s". */
function secondsList(seconds: readonly number[]): string {
  const each = seconds.map((s) => `${formatNumber(s)} s`);
  return each.length > 1 ? `${each.slice(0, -1).join(', ')} and ${each.at(-1)}` : (each[0] ?? '');
}

/** A lifetime as the docs write it: in days, hours or minutes when it is a whole number of them ("7 days"), else in seconds. */
function duration(seconds: number): string {
  for (const [unit, size] of [['day', 86_400], ['hour', 3_600], ['minute', 60]] as const) {
    if (seconds >= size && seconds % size === 0) return `${formatNumber(seconds / size)} ${unit}${seconds === size ? '' : 's'}`;
  }
  return `${formatNumber(seconds)} s`;
}

/** Every key a span may name, with the text it stands for. */
export function numberTexts(bundle: JsonObject): ReadonlyMap<string, string> {
  const texts = new Map<string, string>();
  for (const [bucket, windows] of Object.entries(rateLimitBuckets(bundle))) {
    texts.set(`limits.${bucket}`, windows.map((w) => `${formatNumber(w.limit)} a ${w.name}`).join(' and '));
    texts.set(`limits.${bucket}.list`, windows.map((w) => String(w.limit)).join(','));
    for (const w of windows) texts.set(`limit.${bucket}.${w.name}`, formatNumber(w.limit));
  }
  const windows = rateLimitBuckets(bundle).read ?? [];
  texts.set('windows.list', windows.map((w) => String(w.windowSeconds)).join(','));
  for (const [kind, price] of Object.entries(creditCosts(bundle))) texts.set(`price.${kind}`, formatNumber(price));
  texts.set('credits.monthly', formatNumber(monthlyCredits(bundle)));
  const delivery = webhookDelivery(bundle);
  texts.set('retries', secondsList(delivery.retryDelaysSeconds));
  texts.set('retries.total', `~${formatNumber(Math.round(delivery.retryDelaysSeconds.reduce((a, b) => a + b, 0) / 60))} minutes`);
  texts.set('retries.list', delivery.retryDelaysSeconds.join(','));
  texts.set('retries.first', `${formatNumber(delivery.retryDelaysSeconds[0] ?? 0)} s`);
  texts.set('retries.first.ms', String((delivery.retryDelaysSeconds[0] ?? 0) * 1000));
  texts.set('jitter', `±${formatNumber(Math.round(delivery.jitter * 1000) / 10)} %`);
  texts.set('jitter.fraction', String(delivery.jitter));
  texts.set('timeout', `${formatNumber(delivery.timeoutSeconds)} s`);
  texts.set('timeout.ms', String(delivery.timeoutSeconds * 1000));
  texts.set('attempts', String(delivery.attempts));
  const { lifetimeSeconds } = fileLinks(bundle);
  texts.set('links.lifetime', duration(lifetimeSeconds));
  texts.set('links.lifetime.seconds', formatNumber(lifetimeSeconds));
  return texts;
}

/** The text with every span filled from the bundle; throws naming a key no number has. */
export function fillNumbers(text: string, bundle: JsonObject, file = 'the text'): string {
  const texts = numberTexts(bundle);
  return text.replace(SPAN, (_span, key: string) => {
    const value = texts.get(key);
    if (value === undefined) throw new Error(`${file}: <!-- n:${key} --> names no number of the contract (known: ${[...texts.keys()].join(', ')})`);
    return `<!-- n:${key} -->${value}<!-- /n -->`;
  });
}
