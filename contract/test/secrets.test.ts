// One redaction for the runner's reports and the service's logs: a secret keeps only the
// prefix that says what it was, whether the writer knew the secret or only its shape.
import { describe, expect, it } from 'vitest';
import { redact, redactSecretShapes } from '../secrets.ts';

const KEY = 'sk_test_Kg0t7GCBWjul3IAKcQyMCksSGE44T94I';
const LIVE = 'sk_live_22_YG-Pnof8b15H5bnxX7YyO6R7hjPP3';
const SECRET = 'whsec_aCwsFU2VXibt/0J5ufMfOFCMRx+obFBG==';

describe('redact', () => {
  it('replaces each given secret, wherever it is, with its prefix, and leaves secrets too short to be one alone', () => {
    expect(redact(`a ${KEY} b ${KEY} c ${SECRET} d abc`, [KEY, SECRET, 'abc'])).toBe('a sk_test_…(redacted) b sk_test_…(redacted) c whsec_…(redacted) d abc');
  });
});

describe('redactSecretShapes', () => {
  it.each([
    ['a key in a path', `/v1/avatars/${KEY}`, '/v1/avatars/sk_test_…(redacted)'],
    ['a key inside another word', `/v1/avatars/av_${LIVE}`, '/v1/avatars/av_sk_live_…(redacted)'],
    ['a key in a query', `/v1/avatars?cursor=${KEY}&limit=2`, '/v1/avatars?cursor=sk_test_…(redacted)&limit=2'],
    ['a header as text', `authorization: Bearer ${KEY}`, 'authorization: Bearer sk_test_…(redacted)'],
    ['a body', JSON.stringify({ name: KEY, secret: SECRET }), '{"name":"sk_test_…(redacted)","secret":"whsec_…(redacted)"}'],
    ['a key percent-encoded', `/v1/avatars/${encodeURIComponent(KEY).replaceAll('_', '%5F')}`, '/v1/avatars/sk_test_…(redacted)'],
    ['a secret percent-encoded', `/x?s=${encodeURIComponent(SECRET)}`, '/x?s=whsec_…(redacted)'],
  ])('redacts %s', (_name, text, shown) => {
    expect(redactSecretShapes(text)).toBe(shown);
  });

  it('leaves text without a secret as it is, escapes and prefixes alone included, and changes nothing it redacted before', () => {
    for (const text of ['/v1/avatars/av_123', '/v1/avatars/%E2%9C%93?q=%ZZ', 'sk_test_ alone', 'whsec_…(redacted)']) expect(redactSecretShapes(text)).toBe(text);
    const once = redactSecretShapes(`${KEY} ${SECRET}`);
    expect(redactSecretShapes(once)).toBe(once);
  });
});
