// The events the runner sends a receiver when it plays the sender: the contract's own
// examples of the four event types (openapi/components/examples/Event*.yaml), made
// fresh for each delivery (new event and record IDs, times of the run) so that a
// receiver that keeps processed IDs across runs still sees new events, and put in the
// envelope of the implementation the receiver was written for.
import { randomBytes } from 'node:crypto';
import jsonpointer from 'jsonpointer';
import { loadBundle, type JsonObject } from '../../../contract/schemas.ts';
import { render, type ImplementationProfile, type Json } from '../implementation/profile.ts';

export const EVENT_TYPES = ['avatar.ready', 'avatar.failed', 'avatar_video.ready', 'avatar_video.failed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** One event as the sender made it: its body as a value, and the header that carries its type, if the profile puts it in one. */
export interface Event {
  id: string;
  type: EventType;
  /** The record's ID (data.object.id). */
  objectId: string;
  /** When the record was created, ISO 8601: the order of the jobs. */
  objectCreatedAt: string;
  body: Json;
  /** Headers besides the signature's three (the event type, where the profile puts it there). */
  headers: Record<string, string>;
}

type Example = { value: Json };

/** The contract's example of each event type, read from the bundle. */
function contractExamples(bundle: JsonObject): Record<EventType, Json> {
  const webhooks = bundle.webhooks as Record<string, { post: { requestBody: { content: Record<string, { examples: Record<string, { $ref?: string } & Partial<Example>> }> } } }>;
  const out = {} as Record<EventType, Json>;
  for (const type of EVENT_TYPES) {
    const examples = webhooks[type]?.post.requestBody.content['application/json']?.examples ?? {};
    const first = Object.values(examples)[0];
    const example = first?.$ref ? (jsonpointer.get(bundle, first.$ref.slice(1)) as Example | undefined) : (first as Example | undefined);
    if (!example?.value) throw new Error(`the contract has no example of the ${type} event`);
    out[type] = example.value;
  }
  return out;
}

const ALPHANUMERIC = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A new ID shaped like the example's: the same prefix and length, other characters. */
function freshLike(id: string): string {
  const prefix = /^[a-z]+_/.exec(id)?.[0] ?? '';
  const length = id.length - prefix.length;
  const alphabet = /^[0-9a-f]+$/.test(id.slice(prefix.length)) ? '0123456789abcdef' : ALPHANUMERIC;
  const bytes = randomBytes(length);
  return prefix + Array.from(bytes, (byte) => alphabet[byte % alphabet.length]).join('');
}

export class EventFactory {
  readonly #examples: Record<EventType, Json>;
  readonly #profile: ImplementationProfile;
  readonly #now: () => number;
  readonly #webhookUrl: string;
  #made = 0;

  constructor(options: { profile: ImplementationProfile; now: () => number; webhookUrl: string; bundle?: JsonObject }) {
    this.#examples = contractExamples(options.bundle ?? loadBundle());
    this.#profile = options.profile;
    this.#now = options.now;
    this.#webhookUrl = options.webhookUrl;
  }

  /**
   * A new event of a new job. Jobs are made in the order of the calls: each one's record
   * was created a second after the one before, so "the order of the jobs" is the order
   * in which events were made, whatever order they are delivered in.
   */
  make(type: EventType, change?: (record: Json) => void): Event {
    const example = this.#examples[type];
    const exampleRecord = (example.data as { object: Json }).object;
    const replacements = new Map<string, string>([[example.id as string, freshLike(example.id as string)], [exampleRecord.id as string, freshLike(exampleRecord.id as string)]]);
    if (typeof exampleRecord.avatar_id === 'string') replacements.set(exampleRecord.avatar_id, freshLike(exampleRecord.avatar_id));
    let text = JSON.stringify(example);
    // Every mention of an example ID (a preview URL names its avatar) becomes the new one.
    for (const [from, to] of replacements) text = text.split(from).join(to);
    const event = JSON.parse(text) as Json;
    const record = (event.data as { object: Json }).object;

    // Times of this run: created ten minutes ago plus a second per job made, ended a
    // minute later (every job ended before the run, so no event is about the future).
    const createdMs = Math.floor(this.#now() / 1000) * 1000 - 600_000 + this.#made * 1000;
    this.#made++;
    const endedMs = createdMs + 60_000;
    const iso = (ms: number) => new Date(ms).toISOString();
    if ('created_at' in record) record.created_at = iso(createdMs);
    for (const member of ['updated_at', 'completed_at']) if (member in record) record[member] = iso(endedMs);
    if ('webhook_url' in record) record.webhook_url = this.#webhookUrl;
    event.created_at = iso(endedMs);
    change?.(record);

    const id = event.id as string;
    const objectId = record.id as string;
    return { id, type, objectId, objectCreatedAt: iso(createdMs), ...this.#envelope(id, type, record, event, endedMs) };
  }

  /** The event as the implementation sends it: its record spelled its way, in its envelope. */
  #envelope(id: string, type: EventType, record: Json, contractEvent: Json, endedMs: number): { body: Json; headers: Record<string, string> } {
    const profile = this.#profile;
    if (profile.isContract) return { body: contractEvent, headers: {} };
    const terminal = type.endsWith('.ready') ? 'ready' : 'failed';
    const object: Json = { ...record };
    if (profile.records.status !== '/status') delete object.status;
    setAt(object, profile.records.status, profile.records.states[terminal]);
    const values = { id, type, object, created: new Date(endedMs).toISOString(), created_unix: Math.floor(endedMs / 1000) };
    const body = profile.webhookFormat.envelope ? (render(profile.webhookFormat.envelope, values) as Json) : { id, data: { object } };
    const where = profile.events.type;
    if ('header' in where) return { body, headers: { [where.header]: type } };
    if (jsonpointer.get(body, where.pointer) === undefined) setAt(body, where.pointer, type);
    return { body, headers: {} };
  }
}

/** Sets a value at a JSON Pointer, making the objects on the way. */
function setAt(target: Json, pointer: string, value: unknown): void {
  const parts = pointer.split('/').slice(1).map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (typeof node[part] !== 'object' || node[part] === null) node[part] = {};
    node = node[part] as Json;
  }
  const last = parts.at(-1);
  if (last !== undefined) node[last] = value;
}

/** The sender's usual form: compact JSON in the order it built the members, as JSON.stringify writes it. */
export function usualForm(body: Json): Buffer {
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/**
 * The same JSON value written as no re-serialiser writes it: members in reverse order,
 * tabs and spaces, every non-ASCII character and every slash escaped. A receiver that
 * verifies the bytes it received accepts it; one that parses and writes the body again
 * before verifying computes the signature over other bytes.
 */
export function unusualForm(value: unknown, depth = 0): string {
  const pad = '\t'.repeat(depth + 1);
  const close = '\t'.repeat(depth);
  if (typeof value === 'string') {
    return `"${[...value]
      .map((char) => {
        const code = char.codePointAt(0)!;
        if (char === '/') return '\\/';
        if (char === '"' || char === '\\') return `\\${char}`;
        if (code < 0x20 || code > 0x7e) return (char.length === 2 ? [char.charCodeAt(0), char.charCodeAt(1)] : [code]).map((unit) => `\\u${unit.toString(16).padStart(4, '0')}`).join('');
        return char;
      })
      .join('')}"`;
  }
  if (Array.isArray(value)) return value.length === 0 ? '[ ]' : `[\n${value.map((item) => pad + unusualForm(item, depth + 1)).join(' ,\n')}\n${close}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).reverse();
    if (entries.length === 0) return '{ }';
    return `{\n${entries.map(([key, item]) => `${pad}${unusualForm(key)} :  ${unusualForm(item, depth + 1)}`).join(' ,\n')}\n${close}}`;
  }
  return JSON.stringify(value);
}
