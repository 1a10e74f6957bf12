// What a change to the contract does to a client written against the old one. The
// contract's rule (ND-COMPAT) is that /v1 only ever grows: new optional request members,
// new response members, new error codes, new event types. This classifier reads two
// bundled documents (generated/openapi.json at two points in time) and says, change by
// change, whether it keeps that promise.
//
// Every rule turns on one question: who writes the thing that changed?
// - Clients write requests (bodies, parameters, headers) and the answers their webhook
//   receivers give. Narrowing what may be sent breaks a client that sends what used to
//   be accepted; widening it breaks nobody.
// - Clients read responses, response headers and webhook payloads and headers.
//   Widening what may arrive breaks a client that handles only what used to arrive;
//   narrowing it breaks nobody. Removing a member, or no longer promising it, breaks a
//   client that reads it.
// Two consequences worth naming:
// - A new enum value (or oneOf variant) in something clients read is breaking. The
//   contract marks the value sets it means to grow as plain strings documented as
//   "new codes may be added" (error codes, job error codes); an `enum` is a closed set
//   a client may switch over exhaustively. Diff tools disagree on this one; here it
//   is breaking, for that reason.
// - A new response member is additive, and whether a response schema is closed is not
//   a client's concern: ND-COMPAT has clients ignore members they do not know.
//
// - An ID's format is what a client that checks IDs relies on, whether the schema states it
//   (`pattern`, `minLength`, `maxLength`) or only its description does ("`av_` followed by
//   24 lowercase letters and digits"). A changed pattern or bound is judged as any
//   constraint is; a description of an ID whose stated format changes (its quoted prefixes,
//   its counts, its alphabet) is breaking, since prose cannot be compared exactly: a person
//   decides, and openapi/accepted-breaks.json records the decision.
//
// Only /v1 paths and the webhooks are gated; changes elsewhere are reported as 'other'.
// Where two schemas cannot be compared exactly (a keyword this file does not model),
// the change is reported as breaking, so that a person decides.

import { stringify as canonicalJson } from 'safe-stable-stringify';

export type ChangeKind = 'breaking' | 'additive' | 'other';

export interface Change {
  /** 'breaking' breaks a client of the base; 'additive' is visible but safe; 'other' is not client-visible. */
  kind: ChangeKind;
  /** A readable location: `GET /v1/me 200 response: credits.used`, `webhook avatar.ready payload: data.status`. */
  where: string;
  /** The rule that classified it, short: `response member removed`. */
  rule: string;
  detail?: string;
  /** On a breaking change a person judged to break no client: why (openapi/accepted-breaks.json). */
  accepted?: string;
  /** With `accepted`: what a client must do about the change, when the decision says. */
  action?: string;
  /**
   * How a value is told to be of each variant `where` passes through (a `[label]` of its
   * member path), keyed by the member path up to and including that label: what a reader
   * of traffic needs to count only the calls of that variant. Absent where it passes
   * through none, or through none that can be told apart.
   */
  variants?: Record<string, VariantSelector>;
}

/**
 * What tells a value to be of one variant: the discriminator's (or a const member's)
 * value, else the members only it requires, else its JSON types.
 */
export type VariantSelector = { property: string; value: string } | { required: string[] } | { types: string[] };

/** The changes with each breaking one that an accepted break names marked with its reason (and what a client must do). */
export function markAccepted(changes: Change[], accepted: readonly { rule: string; where: readonly string[]; reason: string; action?: string }[]): Change[] {
  return changes.map((change) => {
    const match = change.kind === 'breaking' ? accepted.find((a) => a.rule === change.rule && a.where.includes(change.where)) : undefined;
    if (!match) return change;
    return match.action === undefined ? { ...change, accepted: match.reason } : { ...change, accepted: match.reason, action: match.action };
  });
}

type Json = Record<string, unknown>;

/** Where a schema sits: what to call it, and whether clients read it or write it. */
interface Site {
  where: string;
  /** The word the rules start with: request, response, payload, webhook. */
  noun: string;
  reads: boolean;
}

interface Walk {
  base: Json;
  head: Json;
  changes: Change[];
  /** Node pairs whose documentation was compared already: a shared component's new description is reported once. */
  documented: WeakMap<object, WeakSet<object>>;
  /** The same for the format an ID's description states: reported once, where first met. */
  idFormats: WeakMap<object, WeakSet<object>>;
  /** Each variant met, by its place (`<site>: <path>[<label>]`): its member path and what tells its values apart. */
  variants: Map<string, { member: string; selector: VariantSelector }>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Keys that only document: a change to them is 'other'. Vendor extensions (x-*) too. */
const DOC_KEYS = new Set(['description', 'summary', 'title', 'example', 'examples', 'externalDocs', '$comment', 'operationId', 'tags']);
/** Raising these lets less through. */
const LOWER_BOUNDS = ['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties'];
/** Lowering these lets less through. */
const UPPER_BOUNDS = ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties'];
/** Adding one lets less through, removing one lets more; any other change is both. */
const EXACT_CONSTRAINTS = ['pattern', 'format', 'multipleOf', 'uniqueItems'];
/** Schema keywords compared by a rule of their own; any other that changes is reported as breaking. */
const MODELLED = new Set(['$ref', 'type', 'enum', 'const', 'properties', 'required', 'additionalProperties', 'items', 'default', 'deprecated', 'oneOf', 'anyOf', 'discriminator', ...LOWER_BOUNDS, ...UPPER_BOUNDS, ...EXACT_CONSTRAINTS]);

export function compareDocuments(base: Json, head: Json): Change[] {
  const walk: Walk = { base, head, changes: [], documented: new WeakMap(), idFormats: new WeakMap(), variants: new Map() };
  for (const key of ['info', 'servers', 'tags']) {
    if (!same(base[key], head[key])) add(walk, 'other', key, `${key} changed`);
  }
  comparePaths(walk);
  compareWebhooks(walk);
  compareSecuritySchemes(walk);
  compareComponentNames(walk);
  return walk.changes;
}

/** Whether a path is gated by ND-COMPAT. */
function isGatedPath(path: string): boolean {
  return path === '/v1' || path.startsWith('/v1/');
}

function comparePaths(walk: Walk): void {
  // Paths are matched by their shape, so renaming `{id}` to `{avatar_id}` is no change.
  const shape = (path: string) => path.replace(/\{[^}]*\}/g, '{}');
  const byShape = (doc: Json) => new Map(Object.keys(obj(doc.paths)).map((path) => [shape(path), path]));
  const basePaths = byShape(walk.base);
  const headPaths = byShape(walk.head);
  for (const key of new Set([...basePaths.keys(), ...headPaths.keys()])) {
    const basePath = basePaths.get(key);
    const headPath = headPaths.get(key);
    const path = (headPath ?? basePath)!;
    const from = walk.changes.length;
    const baseItem = basePath === undefined ? {} : obj(resolve(walk.base, obj(walk.base.paths)[basePath]));
    const headItem = headPath === undefined ? {} : obj(resolve(walk.head, obj(walk.head.paths)[headPath]));
    if (basePath !== undefined && headPath !== undefined) compareDocs(walk, path, baseItem, headItem);
    for (const method of METHODS) {
      const where = `${method.toUpperCase()} ${path}`;
      if (compareExistence(walk, where, 'operation', baseItem[method], headItem[method])) {
        compareOperation(walk, where, false, withPathParameters(baseItem, method), withPathParameters(headItem, method), [basePath ?? '', headPath ?? '']);
      }
    }
    if (!isGatedPath(path)) {
      for (const change of walk.changes.slice(from)) {
        if (change.kind !== 'other') change.detail = `outside /v1, not gated: would be ${change.kind}${change.detail ? `; ${change.detail}` : ''}`;
        change.kind = 'other';
      }
    }
  }
}

function compareWebhooks(walk: Walk): void {
  const baseHooks = obj(walk.base.webhooks);
  const headHooks = obj(walk.head.webhooks);
  for (const name of union(Object.keys(baseHooks), Object.keys(headHooks))) {
    const where = `webhook ${name}`;
    if (!compareExistence(walk, where, 'webhook', baseHooks[name], headHooks[name])) continue;
    const baseItem = obj(resolve(walk.base, baseHooks[name]));
    const headItem = obj(resolve(walk.head, headHooks[name]));
    compareDocs(walk, where, baseItem, headItem);
    for (const method of METHODS) {
      const at = method === 'post' ? where : `${where} ${method.toUpperCase()}`;
      if (compareExistence(walk, at, 'webhook operation', baseItem[method], headItem[method])) {
        compareOperation(walk, at, true, withPathParameters(baseItem, method), withPathParameters(headItem, method), ['', '']);
      }
    }
  }
}

/** Reports an element present on one side only; true when it is on both, to compare further. */
function compareExistence(walk: Walk, where: string, what: string, base: unknown, head: unknown): boolean {
  if (base !== undefined && head === undefined) add(walk, 'breaking', where, `${what} removed`);
  if (base === undefined && head !== undefined) add(walk, 'additive', where, `${what} added`);
  return base !== undefined && head !== undefined;
}

function withPathParameters(item: Json, method: string): Json {
  const operation = obj(item[method]);
  return { ...operation, parameters: [...arr(item.parameters), ...arr(operation.parameters)] };
}

// A webhook is an operation the service calls: its body and headers are what clients
// read, and the answers listed under `responses` are what their receivers send.
function compareOperation(walk: Walk, where: string, webhook: boolean, base: Json, head: Json, paths: [base: string, head: string]): void {
  compareDocs(walk, where, base, head);
  if (!webhook) compareSecurity(walk, where, base, head);
  const parameterSite: Site = webhook ? { where, noun: 'webhook', reads: true } : { where, noun: 'request', reads: false };
  compareParameters(walk, parameterSite, arr(base.parameters), arr(head.parameters), paths);
  const bodySite: Site = webhook ? { where: `${where} payload`, noun: 'payload', reads: true } : { where: `${where} request body`, noun: 'request', reads: false };
  compareRequestBody(walk, bodySite, base.requestBody, head.requestBody);
  const baseResponses = obj(base.responses);
  const headResponses = obj(head.responses);
  const noun = webhook ? 'answer' : 'response';
  for (const status of union(Object.keys(baseResponses), Object.keys(headResponses))) {
    const site: Site = { where: webhook ? `${where} answer ${status}` : `${where} ${status} response`, noun, reads: !webhook };
    if (compareExistence(walk, site.where, `${noun} status`, baseResponses[status], headResponses[status])) {
      compareResponse(walk, site, obj(resolve(walk.base, baseResponses[status])), obj(resolve(walk.head, headResponses[status])));
    }
  }
}

function compareSecurity(walk: Walk, where: string, base: Json, head: Json): void {
  // Each entry is one way to authenticate; an empty list means no authentication.
  const ways = (doc: Json, operation: Json) => {
    const list = arr(operation.security ?? doc.security);
    return list.length === 0 ? ['none'] : list.map((requirement) => Object.entries(obj(requirement)).map(([name, scopes]) => `${name}${arr(scopes).length ? `(${arr(scopes).join(' ')})` : ''}`).sort().join(' + ') || 'none');
  };
  const baseWays = ways(walk.base, base);
  const headWays = ways(walk.head, head);
  for (const way of baseWays.filter((w) => !headWays.includes(w))) add(walk, 'breaking', where, 'security option removed', way);
  for (const way of headWays.filter((w) => !baseWays.includes(w))) add(walk, 'additive', where, 'security option added', way);
}

function compareSecuritySchemes(walk: Walk): void {
  const baseSchemes = obj(obj(walk.base.components).securitySchemes);
  const headSchemes = obj(obj(walk.head.components).securitySchemes);
  for (const name of Object.keys(baseSchemes).filter((n) => n in headSchemes)) {
    const where = `security scheme ${name}`;
    const base = obj(resolve(walk.base, baseSchemes[name]));
    const head = obj(resolve(walk.head, headSchemes[name]));
    compareDocs(walk, where, base, head);
    if (!same(withoutDocs(base), withoutDocs(head))) add(walk, 'breaking', where, 'security scheme changed');
  }
}

// Components are compared where they are used (their $refs are followed), so that a
// change is named at every operation and webhook it reaches. Their names are not on
// the wire: adding, removing or renaming one only renames types generated from the
// document.
function compareComponentNames(walk: Walk): void {
  const baseComponents = obj(walk.base.components);
  const headComponents = obj(walk.head.components);
  for (const kind of union(Object.keys(baseComponents), Object.keys(headComponents))) {
    const baseNames = Object.keys(obj(baseComponents[kind]));
    const headNames = Object.keys(obj(headComponents[kind]));
    for (const name of baseNames.filter((n) => !headNames.includes(n))) add(walk, 'other', `components.${kind}.${name}`, 'component removed');
    for (const name of headNames.filter((n) => !baseNames.includes(n))) add(walk, 'other', `components.${kind}.${name}`, 'component added');
  }
}

function compareParameters(walk: Walk, site: Site, base: unknown[], head: unknown[], paths: [base: string, head: string]): void {
  // Path parameters are keyed by their place in the path, so renaming one is no change;
  // header names are case-insensitive.
  const keyed = (doc: Json, list: unknown[], path: string) => {
    const templateNames = [...path.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]);
    const out = new Map<string, Json>();
    for (const raw of list) {
      const parameter = obj(resolve(doc, raw));
      const name = String(parameter.name);
      const key = parameter.in === 'path' ? `path #${templateNames.indexOf(name)}` : `${parameter.in} ${parameter.in === 'header' ? name.toLowerCase() : name}`;
      out.set(key, parameter); // an operation's own parameter overrides the path's
    }
    return out;
  };
  const baseParameters = keyed(walk.base, base, paths[0]);
  const headParameters = keyed(walk.head, head, paths[1]);
  for (const key of union([...baseParameters.keys()], [...headParameters.keys()])) {
    const b = baseParameters.get(key);
    const h = headParameters.get(key);
    const parameter = (h ?? b)!;
    const thing = parameter.in === 'header' ? 'header' : 'parameter';
    const where = `${site.where} ${parameter.in} ${thing === 'header' ? '' : 'parameter '}${String(parameter.name)}`;
    if (!comparePresence(walk, { ...site, where }, where, thing, b && b.required === true, h && h.required === true)) continue;
    compareDocs(walk, where, b!, h!);
    for (const key of ['style', 'explode', 'allowEmptyValue', 'allowReserved']) {
      if (!same(b![key], h![key])) add(walk, 'breaking', where, `${site.noun} ${thing} serialization changed`, key);
    }
    compareSchema(walk, { ...site, where }, '', b!.schema ?? {}, h!.schema ?? {}, []);
  }
}

function compareRequestBody(walk: Walk, site: Site, baseRaw: unknown, headRaw: unknown): void {
  if (baseRaw === undefined && headRaw === undefined) return;
  const base = obj(resolve(walk.base, baseRaw));
  const head = obj(resolve(walk.head, headRaw));
  if (baseRaw === undefined) {
    add(walk, !site.reads && head.required === true ? 'breaking' : 'additive', site.where, `${site.noun} body added`, head.required === true ? 'required' : 'optional');
    return;
  }
  if (headRaw === undefined) {
    add(walk, 'breaking', site.where, `${site.noun} body removed`);
    return;
  }
  if (!site.reads && base.required !== true && head.required === true) add(walk, 'breaking', site.where, 'request body now required');
  if (!site.reads && base.required === true && head.required !== true) add(walk, 'additive', site.where, 'request body now optional');
  compareDocs(walk, site.where, base, head);
  compareContent(walk, site, obj(base.content), obj(head.content));
}

function compareResponse(walk: Walk, site: Site, base: Json, head: Json): void {
  compareDocs(walk, site.where, base, head);
  const baseHeaders = obj(base.headers);
  const headHeaders = obj(head.headers);
  // Header names are case-insensitive.
  const byName = (headers: Json) => new Map(Object.keys(headers).map((name) => [name.toLowerCase(), name]));
  const baseNames = byName(baseHeaders);
  const headNames = byName(headHeaders);
  for (const key of union([...baseNames.keys()], [...headNames.keys()])) {
    const baseName = baseNames.get(key);
    const headName = headNames.get(key);
    const b = baseName === undefined ? undefined : obj(resolve(walk.base, baseHeaders[baseName]));
    const h = headName === undefined ? undefined : obj(resolve(walk.head, headHeaders[headName]));
    const where = `${site.where} header ${headName ?? baseName}`;
    if (!comparePresence(walk, site, where, 'header', b && b.required === true, h && h.required === true)) continue;
    compareDocs(walk, where, b!, h!);
    compareSchema(walk, { ...site, where }, '', b!.schema ?? {}, h!.schema ?? {}, []);
  }
  compareContent(walk, site, obj(base.content), obj(head.content));
}

function compareContent(walk: Walk, site: Site, base: Json, head: Json): void {
  const types = union(Object.keys(base), Object.keys(head));
  for (const type of types) {
    // The media type is named only where there is a choice of them.
    const where = types.length > 1 || !(type in base) || !(type in head) ? `${site.where} (${type})` : site.where;
    if (!(type in head)) add(walk, 'breaking', where, `${site.noun} content type removed`);
    else if (!(type in base)) add(walk, 'additive', where, `${site.noun} content type added`);
    else {
      const b = obj(resolve(walk.base, base[type]));
      const h = obj(resolve(walk.head, head[type]));
      compareDocs(walk, where, b, h);
      compareSchema(walk, { ...site, where }, '', b.schema ?? {}, h.schema ?? {}, []);
    }
  }
}

/**
 * The presence rules, one home for members, parameters and headers: `required` is true,
 * false, or undefined when the element is absent on that side. True when it is on both.
 */
function comparePresence(walk: Walk, site: Site, where: string, thing: string, base: boolean | undefined, head: boolean | undefined, removedKind: ChangeKind = 'breaking', removedDetail?: string): boolean {
  const name = `${site.noun} ${thing}`;
  if (base !== undefined && head === undefined) add(walk, removedKind, where, `${name} removed`, removedDetail);
  else if (base === undefined && head !== undefined) {
    if (site.reads) add(walk, 'additive', where, `${name} added`);
    else add(walk, head ? 'breaking' : 'additive', where, `${head ? 'required' : 'optional'} ${name} added`);
  } else if (base === true && head === false) add(walk, site.reads ? 'breaking' : 'additive', where, `${name} no longer required`);
  else if (base === false && head === true) add(walk, site.reads ? 'additive' : 'breaking', where, `${name} now required`);
  return base !== undefined && head !== undefined;
}

/** The kind of a change that lets more through: safe where clients write, breaking where they read. */
function widened(site: Site): ChangeKind {
  return site.reads ? 'breaking' : 'additive';
}

function narrowed(site: Site): ChangeKind {
  return site.reads ? 'additive' : 'breaking';
}

// `stack` holds the pairs of $refs being walked, so that a recursive schema ends.
function compareSchema(walk: Walk, site: Site, path: string, baseRaw: unknown, headRaw: unknown, stack: string[]): void {
  const baseRef = refOf(baseRaw);
  const headRef = refOf(headRaw);
  const pair = `${baseRef ?? ''} ${headRef ?? ''}`;
  if ((baseRef || headRef) && stack.includes(pair)) return;
  const inner = baseRef || headRef ? [...stack, pair] : stack;
  const base = flatten(walk.base, schemaOf(resolve(walk.base, baseRaw)));
  const head = flatten(walk.head, schemaOf(resolve(walk.head, headRaw)));
  const where = path ? `${site.where}: ${path}` : site.where;
  compareDocs(walk, where, base.original, head.original, site.reads ? ['default'] : []);
  if (isIdentifier(site, path)) compareIdFormat(walk, where, site, base.original, head.original);
  const baseVariants = variantsOf(walk.base, base.schema);
  const headVariants = variantsOf(walk.head, head.schema);
  if (baseVariants.length > 1 || headVariants.length > 1) compareVariants(walk, site, path, baseVariants, headVariants, inner);
  else compareShape(walk, site, path, baseVariants[0]!.schema, headVariants[0]!.schema, inner);
}

interface Variant {
  /** The variant as a schema of its own: the parent's members and constraints with the variant's. */
  schema: Json;
  original: Json;
  title?: string;
  /** The discriminator's value for this variant. */
  tag?: string;
  label: string;
  selector?: VariantSelector;
}

function compareVariants(walk: Walk, site: Site, path: string, base: Variant[], head: Variant[], stack: string[]): void {
  const matched = new Map<Variant, Variant>();
  const taken = new Set<Variant>();
  // Variants are matched by title, then by the discriminator's value, then by position
  // (unless their discriminator values differ).
  const keys: ((v: Variant, i: number) => string | undefined)[] = [(v) => v.title, (v) => v.tag, (_v, i) => String(i)];
  for (const key of keys) {
    base.forEach((b, i) => {
      if (matched.has(b) || key(b, i) === undefined) return;
      const h = head.find((h, k) => !taken.has(h) && key(h, k) === key(b, i) && (b.tag === undefined || h.tag === undefined || b.tag === h.tag));
      if (!h) return;
      matched.set(b, h);
      taken.add(h);
    });
  }
  // Traffic was made against the base: a variant both have is told apart as the base tells it.
  const at = (variant: Variant, toldBy: Variant = variant) => {
    const member = `${path}[${variant.label}]`;
    const place = `${site.where}: ${member}`;
    if (toldBy.selector) walk.variants.set(place, { member, selector: toldBy.selector });
    return place;
  };
  for (const b of base.filter((v) => !matched.has(v))) add(walk, narrowed(site), at(b), `${site.noun} variant removed`);
  for (const h of head.filter((v) => !taken.has(v))) add(walk, widened(site), at(h), `${site.noun} variant added`);
  for (const [b, h] of matched) {
    compareDocs(walk, at(h, b), b.original, h.original);
    compareSchema(walk, site, `${path}[${h.label}]`, b.schema, h.schema, stack);
  }
}

function compareShape(walk: Walk, site: Site, path: string, base: Json, head: Json, stack: string[]): void {
  const where = path ? `${site.where}: ${path}` : site.where;
  const { noun } = site;

  const baseTypes = typesOf(base);
  const headTypes = typesOf(head);
  const gained = uncovered(headTypes, baseTypes);
  const lost = uncovered(baseTypes, headTypes);
  const types = `${[...(baseTypes ?? ['any'])].join('|')} → ${[...(headTypes ?? ['any'])].join('|')}`;
  if (gained.length && lost.length) add(walk, 'breaking', where, `${noun} type changed`, types);
  else if (gained.length) add(walk, widened(site), where, `${noun} type widened`, types);
  else if (lost.length) add(walk, narrowed(site), where, `${noun} type narrowed`, types);

  const baseValues = valuesOf(base);
  const headValues = valuesOf(head);
  if (baseValues && !headValues) add(walk, widened(site), where, `${noun} values no longer enumerated`);
  if (!baseValues && headValues) add(walk, narrowed(site), where, `${noun} values now enumerated`, headValues.join(', '));
  if (baseValues && headValues) {
    const added = headValues.filter((v) => !baseValues.includes(v));
    const removed = baseValues.filter((v) => !headValues.includes(v));
    if (added.length) add(walk, widened(site), where, `${noun} enum value added`, added.join(', '));
    if (removed.length) add(walk, narrowed(site), where, `${noun} enum value removed`, removed.join(', '));
  }

  compareConstraints(walk, site, where, base, head);

  // A default is what the service assumes when a client leaves the member out.
  if (!site.reads && !same(base.default, head.default)) {
    const rule = base.default === undefined ? 'request default added' : head.default === undefined ? 'request default removed' : 'request default changed';
    add(walk, base.default === undefined ? 'additive' : 'breaking', where, rule, `${JSON.stringify(base.default)} → ${JSON.stringify(head.default)}`);
  }

  const baseProperties = obj(base.properties);
  const headProperties = obj(head.properties);
  const baseRequired = arr(base.required).map(String);
  const headRequired = arr(head.required).map(String);
  const closed = head.additionalProperties === false;
  for (const name of union([...Object.keys(baseProperties), ...baseRequired], [...Object.keys(headProperties), ...headRequired])) {
    const member = path ? `${path}.${name}` : name;
    const inBase = name in baseProperties || baseRequired.includes(name);
    const inHead = name in headProperties || headRequired.includes(name);
    // A request member left out of an open schema is still accepted, only no longer described.
    const removedKind = site.reads || closed ? 'breaking' : 'other';
    const removedDetail = removedKind === 'other' ? 'still accepted: the schema allows other members' : undefined;
    if (comparePresence(walk, site, `${site.where}: ${member}`, 'member', inBase ? baseRequired.includes(name) : undefined, inHead ? headRequired.includes(name) : undefined, removedKind, removedDetail)) {
      compareSchema(walk, site, member, baseProperties[name] ?? {}, headProperties[name] ?? {}, stack);
    }
  }

  // Other members: `false` allows none, anything else is the schema their values follow.
  if (base.additionalProperties !== undefined || head.additionalProperties !== undefined) {
    const baseOpen = base.additionalProperties !== false;
    const headOpen = head.additionalProperties !== false;
    // Clients ignore members they do not know (ND-COMPAT), so this matters in requests only.
    if (baseOpen !== headOpen) add(walk, site.reads ? 'other' : headOpen ? 'additive' : 'breaking', where, `${noun} ${headOpen ? 'opened to' : 'closed to'} other members`);
    if (baseOpen && headOpen) compareSchema(walk, site, path ? `${path}.*` : '*', base.additionalProperties ?? {}, head.additionalProperties ?? {}, stack);
  }

  if (base.items !== undefined || head.items !== undefined) compareSchema(walk, site, `${path}[]`, base.items ?? {}, head.items ?? {}, stack);

  for (const key of union(Object.keys(base), Object.keys(head))) {
    if (MODELLED.has(key) || DOC_KEYS.has(key) || key.startsWith('x-')) continue;
    if (!same(base[key], head[key])) add(walk, 'breaking', where, `${noun} schema changed`, `${key} differs, which this classifier does not compare: check it by hand`);
  }
}

function compareConstraints(walk: Walk, site: Site, where: string, base: Json, head: Json): void {
  const report = (key: string, tighter: boolean) =>
    add(walk, tighter ? narrowed(site) : widened(site), where, `${site.noun} constraint ${tighter ? 'tightened' : 'loosened'}`, `${key} ${JSON.stringify(base[key]) ?? 'none'} → ${JSON.stringify(head[key]) ?? 'none'}`);
  for (const key of [...LOWER_BOUNDS, ...UPPER_BOUNDS]) {
    const b = base[key];
    const h = head[key];
    if (same(b, h)) continue;
    // A bound added lets less through, a bound removed more.
    if (b === undefined || h === undefined) report(key, h !== undefined);
    else if (typeof b === 'number' && typeof h === 'number') report(key, LOWER_BOUNDS.includes(key) ? h > b : h < b);
    else add(walk, 'breaking', where, `${site.noun} constraint changed`, `${key} ${JSON.stringify(b)} → ${JSON.stringify(h)}`);
  }
  for (const key of EXACT_CONSTRAINTS) {
    const b = base[key];
    const h = head[key];
    if (same(b, h)) continue;
    if (b === undefined || h === undefined) report(key, h !== undefined);
    else add(walk, 'breaking', where, `${site.noun} constraint changed`, `${key} ${JSON.stringify(b)} → ${JSON.stringify(h)}`);
  }
}

/**
 * One 'other' change per node whose documentation differs; newly deprecated is
 * additive, since a client should hear of it. `extra` names keys that only document here.
 */
function compareDocs(walk: Walk, where: string, base: Json, head: Json, extra: string[] = []): void {
  let seen = walk.documented.get(base);
  if (!seen) walk.documented.set(base, (seen = new WeakSet()));
  if (seen.has(head)) return;
  seen.add(head);
  const documents = (key: string) => DOC_KEYS.has(key) || key.startsWith('x-') || extra.includes(key);
  const keys = union(Object.keys(base), Object.keys(head)).filter(documents);
  const changed = keys.filter((key) => !same(docValue(walk.base, base[key]), docValue(walk.head, head[key])));
  if (changed.length) add(walk, 'other', where, 'documentation changed', changed.join(', '));
  if (base.deprecated !== true && head.deprecated === true) add(walk, 'additive', where, 'deprecated');
}

/** Whether the schema at `path` of `site` is an ID: a member, parameter or header named `id`, `…_id` or `…-Id`. */
function isIdentifier(site: Site, path: string): boolean {
  const name = path ? path.split(/[.[\]]/).filter(Boolean).pop() : site.where.split(' ').pop();
  return name !== undefined && /(?:^|[_-])id$/i.test(name);
}

/**
 * What a description states of an ID's format: its quoted prefixes (`av_`), its counts
 * (24, base-36) and its alphabet's words, in order. Other quoted code (`404`, a member's
 * name) says nothing of the format. A rewording that keeps them is no change of format;
 * 24 becoming 33 is.
 */
export function statedIdFormat(description: unknown): string[] {
  if (typeof description !== 'string') return [];
  const tokens = description.match(/`[^`]*_`|`[^`]*`|\b(?:base-?)?\d+\b|\b(?:lowercase|uppercase|letters?|digits?|hex(?:adecimal)?|alphanumeric|uuid)\b/gi) ?? [];
  return tokens.filter((token) => !token.startsWith('`') || token.endsWith('_`')).map((token) => token.toLowerCase());
}

/**
 * One change per ID node pair whose description states another format: newly stated is
 * additive (clients learn a rule they may hold answers to); changed or no longer stated is
 * breaking, since a client may hold IDs to the old one and prose cannot be compared exactly.
 */
function compareIdFormat(walk: Walk, where: string, site: Site, base: Json, head: Json): void {
  let seen = walk.idFormats.get(base);
  if (!seen) walk.idFormats.set(base, (seen = new WeakSet()));
  if (seen.has(head)) return;
  seen.add(head);
  const before = statedIdFormat(base.description);
  const after = statedIdFormat(head.description);
  if (same(before, after)) return;
  // Typographic quotes: the changelog shows a description it quotes as the contract's Markdown, not as a value.
  const quote = (text: unknown) => `“${String(text).trim().replace(/\s+/g, ' ')}”`;
  if (before.length === 0) add(walk, narrowed(site), where, 'ID format now documented', quote(head.description));
  else add(walk, 'breaking', where, after.length === 0 ? 'ID format no longer documented' : 'ID format documentation changed', `was ${quote(base.description)}; now ${after.length === 0 ? 'none' : quote(head.description)}`);
}

/** A map of examples by $ref is compared by what the $refs point at. */
function docValue(doc: Json, value: unknown): unknown {
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, refOf(entry) ? resolve(doc, entry) : entry]));
}

/** Folds a plain allOf (no if/then) into one schema; `original` keeps the node as written, for its documentation. */
function flatten(doc: Json, schema: Json): { schema: Json; original: Json } {
  const parts = arr(schema.allOf).map((part) => schemaOf(resolve(doc, part)));
  if (parts.length === 0 || parts.some((part) => 'if' in part)) return { schema, original: schema };
  const { allOf: _allOf, ...rest } = schema;
  return { schema: parts.reduce(merge, rest), original: schema };
}

/** A schema and a part of it as one: members, requirements and constraints of both. */
function merge(parent: Json, part: Json): Json {
  const properties: Json = { ...obj(parent.properties) };
  for (const [name, value] of Object.entries(obj(part.properties))) {
    if (value === false) delete properties[name];
    else if (value !== true || !(name in properties)) properties[name] = value;
  }
  return { ...parent, ...withoutDocs(part), properties, required: union(arr(parent.required).map(String), arr(part.required).map(String)) };
}

/**
 * The alternatives a schema allows, each a schema of its own: the members of a oneOf or
 * anyOf, or the branches of an allOf of `if: {properties: {P: {const: v}}}, then: ...`
 * (a union told apart by P written in conditionals). A schema with neither is its own
 * only alternative.
 */
function variantsOf(doc: Json, schema: Json): Variant[] {
  const listed = arr(schema.oneOf ?? schema.anyOf);
  const conditional = listed.length > 0 ? undefined : conditionalUnion(doc, schema);
  if (listed.length === 0 && !conditional) return [{ schema, original: schema, label: '#1' }];
  const { oneOf: _oneOf, anyOf: _anyOf, discriminator, ...rest } = withoutDocs(schema);
  let parent = rest;
  let parts: Json[];
  let property: string | undefined;
  if (conditional) {
    const { allOf: _allOf, ...withoutConditions } = rest;
    parent = withoutConditions;
    property = conditional.property;
    // Each branch's tag member is the parent's, narrowed to the branch's value.
    const { enum: _enum, ...tagSchema } = schemaOf(resolve(doc, obj(parent.properties)[property]));
    parts = conditional.branches.map(({ tag, then }) => merge(then, { properties: { [conditional.property]: { ...tagSchema, const: tag } } }));
  } else {
    property = typeof obj(discriminator).propertyName === 'string' ? String(obj(discriminator).propertyName) : undefined;
    parts = listed.map((raw) => schemaOf(resolve(doc, raw)));
  }
  const schemas = parts.map((part) => merge(parent, part));
  // Without a discriminator, a member that is a const in every variant tells them apart.
  property ??= Object.keys(obj(schemas[0]?.properties)).find((name) => schemas.every((s) => tagOf(doc, s, name) !== undefined));
  const requires = schemas.map((schema) => arr(schema.required).filter((name): name is string => typeof name === 'string'));
  return parts.map((part, i): Variant => {
    const title = typeof part.title === 'string' ? part.title : undefined;
    const tag = property === undefined ? undefined : tagOf(doc, schemas[i]!, property);
    const ref = refOf(listed[i])?.split('/').pop();
    const label = title ?? (tag !== undefined ? `${property}=${tag}` : (ref ?? `#${i + 1}`));
    const alone = requires[i]!.filter((name) => requires.every((other, k) => k === i || !other.includes(name)));
    const selector = selectorOf(tag === undefined ? undefined : { property: property!, value: tag }, alone, part);
    return { schema: schemas[i]!, original: part, title, tag, label, ...(selector ? { selector } : {}) };
  });
}

/**
 * What tells a variant's values apart: its tag, else the members it requires and no other
 * variant does (`alone`), else its types. Members required through an allOf inside the
 * variant are not read: such a variant is told by its types, or not at all, which counts
 * too many calls rather than too few.
 */
function selectorOf(tag: { property: string; value: string } | undefined, alone: string[], part: Json): VariantSelector | undefined {
  if (tag) return tag;
  if (alone.length > 0) return { required: alone };
  const types = typesOf(part);
  return types ? { types: [...types] } : undefined;
}

function conditionalUnion(doc: Json, schema: Json): { property: string; branches: { tag: string; then: Json }[] } | undefined {
  const parts = arr(schema.allOf).map((part) => schemaOf(resolve(doc, part)));
  if (parts.length < 2) return undefined;
  const branches: { property: string; tag: string; then: Json }[] = [];
  for (const part of parts) {
    const conditions = Object.entries(obj(obj(part.if).properties));
    if (conditions.length !== 1 || 'else' in part || !isObject(part.then)) return undefined;
    const [property, condition] = conditions[0]!;
    if (!isObject(condition) || condition.const === undefined) return undefined;
    branches.push({ property, tag: String(condition.const), then: part.then });
  }
  const property = branches[0]!.property;
  return branches.every((b) => b.property === property) ? { property, branches } : undefined;
}

function tagOf(doc: Json, schema: Json, property: string): string | undefined {
  const member = schemaOf(resolve(doc, obj(schema.properties)[property]));
  if (member.const !== undefined) return String(member.const);
  const values = arr(member.enum);
  return values.length === 1 ? String(values[0]) : undefined;
}

/** The JSON types a schema allows (`const` and `enum` imply theirs); undefined for any. */
function typesOf(schema: Json): Set<string> | undefined {
  if (typeof schema.type === 'string') return new Set([schema.type]);
  if (Array.isArray(schema.type)) return new Set(schema.type.map(String));
  const values = schema.const !== undefined ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : undefined;
  if (!values) return undefined;
  return new Set(values.map(jsonTypeOf));
}

/** A JSON value's type as a schema names it; a whole number is an `integer`. */
export function jsonTypeOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
}

/** The types of `from` that `by` does not allow; an integer is a number. */
function uncovered(from: Set<string> | undefined, by: Set<string> | undefined): string[] {
  if (by === undefined) return [];
  if (from === undefined) return ['any'];
  return [...from].filter((type) => !typeAllowed(by, type));
}

/** Whether `type` is among the `allowed` types; an integer is a number. */
export function typeAllowed(allowed: ReadonlySet<string>, type: string): boolean {
  return allowed.has(type) || (type === 'integer' && allowed.has('number'));
}

function valuesOf(schema: Json): string[] | undefined {
  if (schema.const !== undefined) return [JSON.stringify(schema.const)];
  return Array.isArray(schema.enum) ? schema.enum.map((v) => JSON.stringify(v)) : undefined;
}

function refOf(node: unknown): string | undefined {
  return isObject(node) && typeof node.$ref === 'string' ? node.$ref : undefined;
}

/** Follows local $refs (`#/components/...`) until a node that is not one. */
function resolve(doc: Json, node: unknown): unknown {
  const seen = new Set<string>();
  let current = node;
  for (let ref = refOf(current); ref !== undefined; ref = refOf(current)) {
    if (seen.has(ref) || !ref.startsWith('#/')) return {};
    seen.add(ref);
    current = ref
      .slice(2)
      .split('/')
      .map((step) => uriDecoded(step).replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<unknown>((at, step) => (isObject(at) ? at[step] : undefined), doc);
  }
  return current;
}

/** A $ref's step as a URI fragment means it; a "%" that starts no escape is taken as it is. */
function uriDecoded(step: string): string {
  try {
    return decodeURIComponent(step);
  } catch {
    return step;
  }
}

/** JSON Schema's boolean schemas as objects: `true` allows anything, `false` nothing. */
function schemaOf(node: unknown): Json {
  if (node === false) return { not: {} };
  return obj(node);
}

function withoutDocs(node: Json): Json {
  return Object.fromEntries(Object.entries(node).filter(([key]) => !DOC_KEYS.has(key) && !key.startsWith('x-')));
}

function add(walk: Walk, kind: ChangeKind, where: string, rule: string, detail?: string): void {
  const change: Change = detail === undefined ? { kind, where, rule } : { kind, where, rule, detail };
  const variants = variantsOnTheWay(walk, where);
  walk.changes.push(variants ? { ...change, variants } : change);
}

/** The variants a change's place passes through, keyed by its member path up to each. */
function variantsOnTheWay(walk: Walk, where: string): Record<string, VariantSelector> | undefined {
  const found: Record<string, VariantSelector> = {};
  for (const [place, { member, selector }] of walk.variants) {
    if (where === place || where.startsWith(`${place}.`) || where.startsWith(`${place}[`)) found[member] = selector;
  }
  return Object.keys(found).length > 0 ? found : undefined;
}

/** Equal as JSON values: the order of an object's keys does not count. */
function same(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

function union(a: string[], b: string[]): string[] {
  return [...new Set([...a, ...b])];
}

function isObject(node: unknown): node is Json {
  return typeof node === 'object' && node !== null && !Array.isArray(node);
}

function obj(node: unknown): Json {
  return isObject(node) ? node : {};
}

function arr(node: unknown): unknown[] {
  return Array.isArray(node) ? node : [];
}
