import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { signWebhook } from '../webhookSignature.ts';

interface Vector {
  name: string;
  secret: string;
  timestamp: number;
  body: string;
  signature: string;
}
const { vectors } = JSON.parse(readFileSync(new URL('./vectors.json', import.meta.url), 'utf8')) as {
  vectors: Vector[];
};

/** An independent implementation: OpenSSL's HMAC over the same bytes. */
function opensslSignature(secret: string, timestamp: number, body: string): string {
  const out = execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret], {
    input: Buffer.from(`${timestamp}.${body}`, 'utf8'),
  }).toString('utf8');
  const hex = /([0-9a-f]{64})\s*$/.exec(out)?.[1];
  if (!hex) throw new Error(`unexpected openssl output: ${out}`);
  return `v1=${hex}`;
}

describe('signWebhook', () => {
  it.each(vectors.map((vector) => [vector.name, vector] as const))('when signing %s, then it matches the fixed vector', (_name, vector) => {
    expect(signWebhook(vector.secret, vector.timestamp, vector.body)).toBe(vector.signature);
  });

  it.each(vectors.map((vector) => [vector.name, vector] as const))('when openssl signs %s, then it agrees with the fixed vector', (_name, vector) => {
    expect(opensslSignature(vector.secret, vector.timestamp, vector.body)).toBe(vector.signature);
  });

  it('when the body is a Buffer, then the bytes are signed as they are', () => {
    for (const vector of vectors) {
      expect(signWebhook(vector.secret, vector.timestamp, Buffer.from(vector.body, 'utf8'))).toBe(vector.signature);
    }
  });

  it('when the body is not valid UTF-8, then the exact bytes are still signed', () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    const out = execFileSync('openssl', ['dgst', '-sha256', '-hmac', 'k'], {
      input: Buffer.concat([Buffer.from('12.'), bytes]),
    }).toString();
    expect(signWebhook('k', 12, bytes)).toBe(`v1=${/([0-9a-f]{64})\s*$/.exec(out)?.[1]}`);
  });

  it('when the timestamp is not whole seconds, then it refuses to sign', () => {
    expect(() => signWebhook('k', 1.5, '{}')).toThrow(RangeError);
    expect(() => signWebhook('k', -1, '{}')).toThrow(RangeError);
  });
});

describe('the worked example the docs publish', () => {
  it('is what signWebhook and OpenSSL compute', () => {
    const description = String((JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')) as { info: { description: string } }).info.description);
    const field = (name: string) => new RegExp(`^${name}: +(.+)$`, 'm').exec(description)![1]!;
    const [secret, timestamp, body, signature] = [field('secret'), Number(field('timestamp')), field('body'), field('signature')];

    expect(signWebhook(secret, timestamp, body)).toBe(signature);
    expect(opensslSignature(secret, timestamp, body)).toBe(signature);
  });
});
