// Breaking changes judged against recorded traffic: a change inside one variant of a body
// counts only the calls of that variant, told apart as the contract tells them (its
// discriminator, the members a variant alone requires, its types).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compareDocuments, type VariantSelector } from '../compatibility.ts';
import { callsFromHar, hasMember, judgeAgainstTraffic } from '../traffic.ts';

type Node = { [key: string]: any };

const FIXTURE = readFileSync(new URL('./fixtures/bundle.json', import.meta.url), 'utf8');
const fixture = (): Node => JSON.parse(FIXTURE) as Node;
const schemas = (doc: Node) => doc.components.schemas;

const PROMPT = { type: 'prompt', name: 'Ama', prompt: 'A presenter in a studio' };
const PHOTO = { type: 'photo', name: 'Ama', file: 'https://example.com/ama.png' };

/** A HAR of avatar creates, one entry per body, each answered 202. */
function createsHar(bodies: object[]): unknown {
  const entries = bodies.map((body) => ({
    request: { method: 'POST', url: 'http://127.0.0.1:3000/v1/avatars', headers: [], postData: { text: JSON.stringify(body) } },
    response: { status: 202, headers: [], content: { text: '{}' } },
  }));
  return { log: { entries } };
}

function impactsOf(head: Node, bodies: object[]) {
  const base = fixture();
  const calls = callsFromHar(createsHar(bodies), Object.keys(base.paths));
  return judgeAgainstTraffic(compareDocuments(base, head), calls);
}

describe('a breaking change inside a variant of a request body, against traffic', () => {
  it('when the photo variant is removed, then it breaks the photo creates only', () => {
    const head = fixture();
    schemas(head).AvatarCreateRequest.oneOf.pop();

    const [impact] = impactsOf(head, [PROMPT, PROMPT, PHOTO]);

    expect(impact?.change.where).toBe('POST /v1/avatars request body: [From a photo]');
    expect(impact?.touched).toEqual([{ method: 'POST', template: '/v1/avatars', status: 202, member: '[From a photo]', count: 1 }]);
  });

  it('when a member both variants send is tightened in one, then only the calls of that one count', () => {
    const head = fixture();
    schemas(head).PhotoAvatarCreateRequest.properties.name.maxLength = 40;

    const [impact] = impactsOf(head, [PROMPT, PROMPT, PHOTO, PHOTO, PHOTO]);

    expect(impact?.change.where).toBe('POST /v1/avatars request body: [From a photo].name');
    expect(impact?.touched.map((group) => group.count)).toEqual([3]);
  });

  it('when no call of the variant was observed, then the change touches nothing observed, saying so', () => {
    const head = fixture();
    schemas(head).AvatarCreateRequest.oneOf.pop();

    const [impact] = impactsOf(head, [PROMPT]);

    expect(impact?.touched).toEqual([]);
    expect(impact?.untouched).toBe('1 call of POST /v1/avatars observed, none sent [From a photo]');
  });
});

describe('variants told apart by the members each alone requires (no discriminator)', () => {
  /** The fixture's avatar variants with no discriminator and no const to tell them by. */
  function untagged(): Node {
    const doc = fixture();
    delete schemas(doc).AvatarCreateRequest.discriminator;
    delete schemas(doc).PhotoAvatarCreateRequest.properties.type.const;
    delete schemas(doc).PromptAvatarCreateRequest.properties.type.const;
    return doc;
  }

  it('when a member both require is tightened in one, then only the calls with what that one alone requires count', () => {
    const head = untagged();
    schemas(head).PhotoAvatarCreateRequest.properties.name.maxLength = 40;

    const calls = callsFromHar(createsHar([PROMPT, PHOTO, PHOTO]), Object.keys(head.paths));
    const [impact] = judgeAgainstTraffic(compareDocuments(untagged(), head), calls);

    expect(impact?.change.variants).toEqual({ '[From a photo]': { required: ['file'] } });
    expect(impact?.touched.map((group) => group.count)).toEqual([2]);
  });

  it('when the same change also adds a required member to that variant, then the calls are still told apart as the base tells them', () => {
    const head = untagged();
    schemas(head).PhotoAvatarCreateRequest.properties.consent = { type: 'boolean' };
    schemas(head).PhotoAvatarCreateRequest.required.push('consent');
    schemas(head).PhotoAvatarCreateRequest.properties.name.maxLength = 40;

    const calls = callsFromHar(createsHar([PROMPT, PHOTO, PHOTO]), Object.keys(head.paths));
    const impacts = judgeAgainstTraffic(compareDocuments(untagged(), head), calls);

    const counts = Object.fromEntries(impacts.map((impact) => [impact.change.where.split(': ')[1], impact.touched.map((group) => group.count)]));
    expect(counts).toEqual({ '[From a photo].name': [2], '[From a photo].consent': [2] });
  });
});

describe('a member now required in one variant, against traffic', () => {
  it('breaks the calls of that variant that lack it, not those of the others', () => {
    const head = fixture();
    schemas(head).PhotoAvatarCreateRequest.properties.consent = { type: 'boolean' };
    schemas(head).PhotoAvatarCreateRequest.required.push('consent');

    const [impact] = impactsOf(head, [PROMPT, PROMPT, PHOTO, { ...PHOTO, consent: true }]);

    expect(impact?.change.where).toBe('POST /v1/avatars request body: [From a photo].consent');
    expect(impact?.touched.map((group) => group.count)).toEqual([1]);
  });
});

describe('a member path through variants', () => {
  it('follows a variant told by the members it alone requires, or by its type', () => {
    const variants: Record<string, VariantSelector> = { '[By seconds]': { required: ['seconds'] }, 'error[none]': { types: ['null'] } };

    expect(hasMember({ seconds: 60 }, '[By seconds]', variants)).toBe(true);
    expect(hasMember({ to: '2026-12-01T00:00:00Z' }, '[By seconds]', variants)).toBe(false);
    expect(hasMember({ error: null }, 'error[none]', variants)).toBe(true);
    expect(hasMember({ error: { code: 'x' } }, 'error[none]', variants)).toBe(false);
  });

  it('reads a label with dots and brackets in it as one label, and one it has no selector for as any variant', () => {
    const variants: Record<string, VariantSelector> = { 'data[][v1.2 [beta]]': { property: 'kind', value: 'beta' } };

    expect(hasMember({ data: [{ kind: 'beta', x: 1 }] }, 'data[][v1.2 [beta]].x', variants)).toBe(true);
    expect(hasMember({ data: [{ kind: 'stable', x: 1 }] }, 'data[][v1.2 [beta]].x', variants)).toBe(false);
    expect(hasMember({ data: [{ kind: 'stable', x: 1 }] }, 'data[][Unknown].x', variants)).toBe(true);
  });

  it('reads a label whose brackets do not pair up to its first closing bracket', () => {
    expect(hasMember({ file: 'x' }, '[Photo [beta].file')).toBe(true);
    expect(hasMember({ name: 'x' }, '[Photo [beta].file')).toBe(false);
  });

  it('finds no member, nor any variant, in a call without a JSON object', () => {
    expect(hasMember(undefined, '[Legacy]')).toBe(false);
    expect(hasMember('text', '[Legacy]')).toBe(false);
  });
});
