// What a change of the contract would break among the calls clients actually made: the
// breaking changes of compatibility.ts judged against recorded traffic, a HAR file (the
// runner's, the proxy's or the receiver run's --report-har, or a browser's export). Each
// observed call is matched to the operation whose path template fits its URL, and each
// breaking change to the calls it touches: those of its operation, with its status where
// it names one, and showing (or sending) its member where it names one. A change that
// touches no observed call is said to be so: it breaks a client only through calls this
// traffic does not hold.
import { jsonTypeOf, typeAllowed, type Change, type VariantSelector } from './compatibility.ts';

/** One call of the traffic, as the judging reads it. */
export interface ObservedCall {
  method: string;
  /** The contract's path template the URL matched, or undefined outside the contract. */
  template: string | undefined;
  status: number;
  query: string[];
  requestJson: unknown;
  responseJson: unknown;
  /** Lower-case names. */
  responseHeaders: string[];
  requestHeaders: string[];
  /** A webhook delivery: its event type, from the payload's `type` (or `event`). */
  webhook?: string;
}

/** The observed calls one breaking change touches, grouped by operation, status and member. */
export interface TouchedCalls {
  method: string;
  /** The path template, or `webhook <event type>`. */
  template: string;
  status?: number;
  member?: string;
  count: number;
}

export interface TrafficImpact {
  change: Change;
  touched: TouchedCalls[];
  /** Why nothing was touched, when nothing was: said in words a reader can act on. */
  untouched?: string;
}

export class TrafficError extends Error {
  override name = 'TrafficError';
}

/**
 * The calls of a HAR file, matched to `templates` (the contract's paths). A file that is
 * not HAR is refused naming what it lacks.
 */
export function callsFromHar(har: unknown, templates: readonly string[]): ObservedCall[] {
  const entries = (har as { log?: { entries?: unknown } } | null)?.log?.entries;
  if (!Array.isArray(entries)) {
    throw new TrafficError('the traffic file is not HAR: it has no log.entries array (the runner, the proxy and a receiver run write one with --report-har <file>; a browser exports one from its network panel)');
  }
  const match = templateMatcher(templates);
  return entries.map((entry, index): ObservedCall => {
    const request = (entry as { request?: { method?: unknown; url?: unknown; headers?: unknown; postData?: { text?: unknown } } }).request;
    const response = (entry as { response?: { status?: unknown; headers?: unknown; content?: { text?: unknown } } }).response;
    if (typeof request?.method !== 'string' || typeof request.url !== 'string') throw new TrafficError(`log.entries[${index}].request: method and url must be strings`);
    if (typeof response?.status !== 'number') throw new TrafficError(`log.entries[${index}].response.status must be a number`);
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      throw new TrafficError(`log.entries[${index}].request.url is not a URL: ${JSON.stringify(request.url).slice(0, 80)}`);
    }
    const requestJson = parseJson(request.postData?.text);
    const webhook = (entry as { _webhook?: unknown })._webhook === true ? eventTypeOf(requestJson) : undefined;
    return {
      method: request.method.toUpperCase(),
      template: webhook === undefined ? match(url.pathname) : undefined,
      status: response.status,
      query: [...url.searchParams.keys()],
      requestJson,
      responseJson: parseJson(response.content?.text),
      requestHeaders: headerNames(request.headers),
      responseHeaders: headerNames(response.headers),
      ...(webhook === undefined ? {} : { webhook }),
    };
  });
}

/**
 * Each breaking change, with the observed calls it would break; the accepted ones too,
 * since a break judged to harm no client is worth holding to what clients did.
 */
export function judgeAgainstTraffic(changes: readonly Change[], calls: readonly ObservedCall[]): TrafficImpact[] {
  return changes
    .filter((change) => change.kind === 'breaking')
    .map((change) => {
      const site = siteOf(change.where);
      if (!site) return { change, touched: [], untouched: 'not a place of an operation or a webhook (a component or a security scheme): judged against no call' };
      const ofSite = calls.filter((call) => (site.webhook !== undefined ? call.webhook === site.webhook : call.webhook === undefined && call.method === site.method && call.template === site.template));
      if (ofSite.length === 0) return { change, touched: [], untouched: site.webhook !== undefined ? `no ${site.webhook} webhook was observed` : `no ${site.method} ${site.template} call was observed` };
      const ofStatus = site.status === undefined ? ofSite : ofSite.filter((call) => statusMatches(site.status!, call.status));
      if (ofStatus.length === 0) return { change, touched: [], untouched: `${counted(ofSite.length, 'call')} of ${label(site)} observed, none answered ${site.status}` };
      const hit = ofStatus.filter((call) => touches(site, change, call));
      if (hit.length === 0) return { change, touched: [], untouched: `${counted(ofStatus.length, 'call')} of ${label(site)}${site.status ? ` answered ${site.status}` : ''} observed, none ${site.member ? `${site.side === 'request' ? 'sent' : 'showed'} ${site.member}` : `with its ${site.part}`}` };
      const groups = new Map<string, TouchedCalls>();
      for (const call of hit) {
        const key = `${call.status}`;
        const group = groups.get(key) ?? { method: site.webhook !== undefined ? 'POST' : site.method!, template: site.webhook !== undefined ? `webhook ${site.webhook}` : site.template!, status: call.status, ...(site.member ? { member: site.member } : site.part ? { member: site.part } : {}), count: 0 };
        group.count++;
        groups.set(key, group);
      }
      return { change, touched: [...groups.values()] };
    });
}

/** The impacts as the diff prints them, after its list of changes. */
export function formatImpacts(impacts: readonly TrafficImpact[], calls: number, file: string): string {
  const lines = [`Against the traffic of ${file} (${counted(calls, 'observed call')}):`];
  if (impacts.length === 0) lines.push('  no breaking change to judge.');
  for (const impact of impacts) {
    lines.push(`  ${impact.change.where} — ${impact.change.rule}${impact.change.accepted === undefined ? '' : ' (accepted)'}`);
    if (impact.untouched) lines.push(`    touches nothing observed: ${impact.untouched}`);
    for (const group of impact.touched) lines.push(`    breaks ${group.method} ${group.template}${group.status ? ` ${group.status}` : ''}${group.member ? ` (${group.member})` : ''}: seen ${counted(group.count, 'time')}`);
  }
  const breaking = impacts.filter((impact) => impact.touched.length > 0).length;
  lines.push('', `${breaking} of ${counted(impacts.length, 'breaking change')} would break observed calls; ${impacts.length - breaking} touch${impacts.length - breaking === 1 ? 'es' : ''} nothing that was observed.`);
  return `${lines.join('\n')}\n`;
}

interface Site {
  method?: string;
  template?: string;
  webhook?: string;
  status?: string;
  side: 'request' | 'response';
  /** A member path inside the body (`data[].name`), when the change names one. */
  member?: string;
  /** What else it names: `query parameter X`, `header X`. */
  part?: string;
}

const METHODS = /^(GET|PUT|POST|DELETE|OPTIONS|HEAD|PATCH|TRACE) (\/\S*)(.*)$/;

/** Where a change is, read from compatibility.ts's `where`: "GET /v1/avatars/{id} 200 response: name", "webhook avatar.ready payload: data.object.name". */
function siteOf(where: string): Site | undefined {
  const [place, ...memberParts] = where.split(': ');
  const member = memberParts.length > 0 ? memberParts.join(': ') : undefined;
  const webhook = /^webhook (\S+)(.*)$/.exec(place!);
  if (webhook) {
    const rest = webhook[2]!.trim();
    return { webhook: webhook[1]!, side: 'request', ...(member ? { member } : {}), ...partOf(rest.replace(/^payload\s*/, '')) };
  }
  const operation = METHODS.exec(place!);
  if (!operation) return undefined;
  const rest = operation[3]!.trim();
  const status = /^(\d{3}|\dXX|default) response\s*(.*)$/.exec(rest);
  if (status) return { method: operation[1]!, template: operation[2]!, status: status[1]!, side: 'response', ...(member ? { member } : {}), ...partOf(status[2]!) };
  return { method: operation[1]!, template: operation[2]!, side: 'request', ...(member ? { member } : {}), ...partOf(rest.replace(/^request body\s*/, '').replace(/^request\s*/, '')) };
}

function partOf(rest: string): { part?: string } {
  const part = rest.replace(/^\(.*\)$/, '').trim();
  return part ? { part } : {};
}

/** Whether a call shows what the change is about: the member it names, the parameter or header, or else the call itself. */
function touches(site: Site, change: Change, call: ObservedCall): boolean {
  // A rule that now asks for what calls did not send breaks the calls that lack it.
  const demands = /(required .* added|now required)/.test(change.rule);
  if (site.member) {
    const json = site.side === 'request' ? call.requestJson : call.responseJson;
    const present = hasMember(json, site.member, change.variants);
    if (!demands) return present;
    // A member now asked of one variant breaks the calls of that variant that lack it.
    const variant = variantOf(site.member, change.variants);
    return !present && (variant === undefined || hasMember(json, variant, change.variants));
  }
  if (site.part) {
    const parameter = /^(query|path|header|cookie) (?:parameter )?(\S+)$/.exec(site.part);
    if (parameter) {
      const [, location, name] = parameter;
      if (location === 'path') return true;
      const sent = location === 'query' ? call.query.includes(name!) : call.requestHeaders.includes(name!.toLowerCase());
      return demands ? !sent : sent;
    }
    const header = /^header (\S+)$/.exec(site.part);
    if (header) return site.side === 'response' ? call.responseHeaders.includes(header[1]!.toLowerCase()) : call.requestHeaders.includes(header[1]!.toLowerCase());
  }
  return true;
}

/**
 * Whether `json` holds the member path: `a.b`, `data[].name` (any item), `[label].b` (the
 * value when it is of that variant, told by `variants`, keyed by the path up to the label;
 * a variant with no selector there is read as any).
 */
export function hasMember(json: unknown, path: string, variants: Readonly<Record<string, VariantSelector>> = {}): boolean {
  let values: unknown[] = [json];
  for (const { name, brackets } of memberSteps(path, variants)) {
    values = values.flatMap((value) => {
      if (!name) return value !== null && typeof value === 'object' ? [value] : [];
      return value && typeof value === 'object' && !Array.isArray(value) && name in value ? [(value as Record<string, unknown>)[name]] : [];
    });
    for (const { label, through } of brackets) {
      if (label === '') values = values.flatMap((value) => (Array.isArray(value) ? value : []));
      else {
        const selector = variants[through];
        if (selector) values = values.filter((value) => selects(selector, value));
      }
    }
    if (values.length === 0) return false;
  }
  return true;
}

/** The member path up to the last variant it passes through, or undefined when it passes through none. */
function variantOf(path: string, variants: Readonly<Record<string, VariantSelector>> = {}): string | undefined {
  const labels = memberSteps(path, variants).flatMap((step) => step.brackets.filter((bracket) => bracket.label !== ''));
  return labels.at(-1)?.through;
}

/** One step of a member path: its name, and the brackets after it, each with the path up to and including it. */
interface MemberStep {
  name: string;
  /** `label` is `''` for an array's items, else a variant's label. */
  brackets: { label: string; through: string }[];
}

/**
 * A member path read step by step: each step's name and the brackets after it. A label is
 * read as the change named it where `variants` has its place (dots and brackets in it are
 * the label's); else to its matching `]`, or to the first `]` where the brackets in it do
 * not pair up.
 */
function memberSteps(path: string, variants: Readonly<Record<string, VariantSelector>> = {}): MemberStep[] {
  const known = Object.keys(variants);
  const steps: MemberStep[] = [];
  let step: MemberStep = { name: '', brackets: [] };
  let at = 0;
  while (at < path.length) {
    const char = path[at]!;
    if (char === '[') {
      // `[]` is an array's items (a label is never empty).
      const named = path[at + 1] === ']' ? [] : known.filter((place) => place.length > at + 1 && place[at] === '[' && path.startsWith(place));
      const end = named.length > 0 ? Math.max(...named.map((place) => place.length)) - 1 : matchingBracket(path, at);
      step.brackets.push({ label: path.slice(at + 1, end), through: path.slice(0, end + 1) });
      at = end + 1;
    } else if (char === '.') {
      steps.push(step);
      step = { name: '', brackets: [] };
      at++;
    } else {
      step.name += char;
      at++;
    }
  }
  steps.push(step);
  return steps;
}

/** Where the `[` at `open` closes: its matching `]`, else (unpaired) the first `]`, else the end. */
function matchingBracket(path: string, open: number): number {
  for (let end = open + 1, depth = 1; end < path.length; end++) {
    if (path[end] === '[') depth++;
    else if (path[end] === ']' && --depth === 0) return end;
  }
  const first = path.indexOf(']', open);
  return first < 0 ? path.length : first;
}

/** Whether a value is of the variant the selector tells. */
function selects(selector: VariantSelector, value: unknown): boolean {
  const object = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  if ('property' in selector) return object !== undefined && object[selector.property] !== undefined && String(object[selector.property]) === selector.value;
  if ('required' in selector) return object !== undefined && selector.required.every((name) => name in object);
  return typeAllowed(new Set(selector.types), jsonTypeOf(value));
}

function statusMatches(status: string, observed: number): boolean {
  if (/^\d{3}$/.test(status)) return Number(status) === observed;
  if (/^\dXX$/.test(status)) return Math.floor(observed / 100) === Number(status[0]);
  return true;
}

/** Literal templates before templated ones, so /v1/webhooks/events is never read as /v1/webhooks/{id}. */
function templateMatcher(templates: readonly string[]): (path: string) => string | undefined {
  const compiled = templates
    .map((template) => ({ template, params: (template.match(/\{/g) ?? []).length, regex: new RegExp(`^${template.split(/\{[^}]+\}/).map(escape).join('[^/]+')}/?$`) }))
    .sort((a, b) => a.params - b.params);
  return (path) => compiled.find(({ regex }) => regex.test(path))?.template;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function parseJson(text: unknown): unknown {
  if (typeof text !== 'string' || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function eventTypeOf(json: unknown): string | undefined {
  if (!json || typeof json !== 'object') return undefined;
  const record = json as Record<string, unknown>;
  const type = record.type ?? record.event;
  return typeof type === 'string' ? type : undefined;
}

function headerNames(headers: unknown): string[] {
  return Array.isArray(headers) ? headers.map((header) => String((header as { name?: unknown }).name ?? '').toLowerCase()) : [];
}

function label(site: Site): string {
  return site.webhook !== undefined ? `webhook ${site.webhook}` : `${site.method} ${site.template}`;
}

function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
