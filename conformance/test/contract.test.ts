import { describe, expect, it } from 'vitest';
import { ContractValidator } from '../src/contract.ts';

const validator = ContractValidator.load();
const doc = validator.document as { components: { examples: Record<string, { value: unknown }> } };
const rateHeaders = { 'ratelimit-limit': '120', 'ratelimit-remaining': '119', 'ratelimit-reset': '42', 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': '119', 'x-ratelimit-reset': '42', 'ratelimit-policy': '"minute";q=120;w=60, "day";q=10000;w=86400', ratelimit: '"minute";r=119;t=42' };

describe('ContractValidator', () => {
  it('when given the contract, then it compiles with Ajv in strict mode and the examples validate', () => {
    expect(validator.validateSchema('Avatar', doc.components.examples.AvatarReady!.value)).toEqual([]);
    expect(validator.validateSchema('AvatarVideo', doc.components.examples.AvatarVideoReady!.value)).toEqual([]);
    expect(validator.validateSchema('Account', doc.components.examples.Account!.value)).toEqual([]);
    expect(validator.validateSchema('AvatarReadyEvent', doc.components.examples.EventAvatarReady!.value)).toEqual([]);
  });

  it('when a request breaks a rule, then the conditional schema says so', () => {
    expect(validator.validateSchema('AvatarCreateRequest', { type: 'props', name: 'n', ethnicity: 'Asian', sex: 'male', age: 19 })).not.toEqual([]);
    expect(validator.validateSchema('AvatarCreateRequest', { type: 'prompt', name: 'n', prompt: 'p', age: 30 })).not.toEqual([]);
  });

  it('when a path is matched, then the operation and its bucket are known', () => {
    expect(validator.match('GET', '/v1/avatars/av_1')).toMatchObject({ operationId: 'getAvatar', bucket: 'read' });
    expect(validator.match('POST', '/v1/avatar-videos')).toMatchObject({ operationId: 'createAvatarVideo', bucket: 'generation' });
    expect(validator.match('GET', '/me')).toBeUndefined();
  });

  it('when an answer is as documented, then there is nothing to report', () => {
    const body = doc.components.examples.AvatarReady!.value;
    expect(validator.validateResponse('GET', '/v1/avatars/av_1', 200, { 'content-type': 'application/json', ...rateHeaders }, JSON.stringify(body), body)).toEqual([]);
  });

  it.each([
    ['an undocumented status', 418, { 'content-type': 'application/json', ...rateHeaders }, {}, 'status'],
    ['another media type', 200, { 'content-type': 'text/html', ...rateHeaders }, undefined, 'content-type'],
    ['a missing required header', 200, { 'content-type': 'application/json' }, doc.components.examples.AvatarReady!.value, 'header'],
    ['a header of the wrong type', 200, { 'content-type': 'application/json', ...rateHeaders, 'ratelimit-reset': 'soon' }, doc.components.examples.AvatarReady!.value, 'header'],
    ['a body missing members', 200, { 'content-type': 'application/json', ...rateHeaders }, { id: 'av_1' }, 'body'],
  ] as const)('when an answer has %s, then it is reported', (_name, status, headers, body, kind) => {
    const violations = validator.validateResponse('GET', '/v1/avatars/av_1', status, headers, JSON.stringify(body ?? ''), body);
    expect(violations.map((v) => v.kind)).toContain(kind);
  });
});
