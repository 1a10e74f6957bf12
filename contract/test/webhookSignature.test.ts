import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { librariesTakeSecret, signStandardWebhook, signWebhook, signingSecretOf, standardWebhookKey, standardWebhookSecret } from '../webhookSignature.ts';

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

describe('signStandardWebhook (ND-STANDARD-WEBHOOKS)', () => {
  it('when given the Standard Webhooks specification\'s own test vector, then it computes its signature', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(signStandardWebhook(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('when the secret is URL-safe base64, as the service made them before, then the key is the bytes it encodes, the same as its standard-alphabet form gives', () => {
    const urlSafe = 'whsec_q1Xw-8nT3vYk_Rb2Lp9sZf0HcUe4Mj7A';
    const standard = standardWebhookSecret(urlSafe);

    expect(standard).toBe('whsec_q1Xw+8nT3vYk/Rb2Lp9sZf0HcUe4Mj7A');
    expect(Buffer.from(standardWebhookKey(urlSafe))).toEqual(Buffer.from('q1Xw-8nT3vYk_Rb2Lp9sZf0HcUe4Mj7A', 'base64url'));
    expect(Buffer.from(standardWebhookKey(urlSafe))).toEqual(Buffer.from('q1Xw+8nT3vYk/Rb2Lp9sZf0HcUe4Mj7A', 'base64'));
    expect(signStandardWebhook(urlSafe, 'evt_1', 1, '{}')).toBe(signStandardWebhook(standard, 'evt_1', 1, '{}'));
    // The source's scheme keys with the text, so an old secret's X-Service-Signature is what it always was.
    expect(signWebhook(urlSafe, 1, '{}')).not.toBe(signWebhook(standard, 1, '{}'));
  });

  it('when a secret is made from key bytes, then it is whsec_ and standard base64, which the standardwebhooks library takes as written and keys with the same bytes', () => {
    const key = Buffer.from('ab7fc0fbf8e6a3f8a7fd2aaa09a3e07a0bb1b9dcf3e0fefe', 'hex');
    const secret = signingSecretOf(key);

    expect(secret).toBe('whsec_q3/A+/jmo/in/SqqCaPgeguxudzz4P7+');
    expect(librariesTakeSecret(secret)).toBe(true);
    expect(standardWebhookSecret(secret)).toBe(secret);
    expect(Buffer.from(standardWebhookKey(secret))).toEqual(key);
    expect(new Webhook(secret).sign('evt_1', new Date(1000), '{}')).toBe(signStandardWebhook(secret, 'evt_1', 1, '{}'));
  });

  it.each([
    ['URL-safe, with - or _', 'whsec_q1Xw-8nT3vYk_Rb2Lp9sZf0HcUe4Mj7A'],
    ['without the prefix', 'q1Xw+8nT3vYk/Rb2Lp9sZf0HcUe4Mj7A'],
    ['not base64 after it', 'whsec_test_5f3a9c1e7b2d4f6a8c0e2b4d6f8a0c2e'],
    ['unpadded', 'whsec_q1Xw+8nT3vYk/Rb2Lp9sZf0HcUe4Mj7'],
  ])('when the secret is %s, then librariesTakeSecret says no, as the standardwebhooks library refuses or misreads it', (_, secret) => {
    expect(librariesTakeSecret(secret)).toBe(false);
    if (secret.startsWith('whsec_') && /[-_]/.test(secret.slice(6))) expect(() => new Webhook(secret)).toThrow(/incorrect characters/);
  });

  it('when the secret is not whsec_ and base64, then its UTF-8 bytes are the key, so every secret signs', () => {
    expect(Buffer.from(standardWebhookKey('whsec_test_5f3a9c1e7b2d4f6a8c0e2b4d6f8a0c2e'))).toEqual(Buffer.from('whsec_test_5f3a9c1e7b2d4f6a8c0e2b4d6f8a0c2e'));
    expect(Buffer.from(standardWebhookKey('plain secret'))).toEqual(Buffer.from('plain secret'));
  });

  it('when the timestamp is not whole seconds, then it refuses to sign', () => {
    expect(() => signStandardWebhook('k', 'evt_1', 1.5, '{}')).toThrow(RangeError);
  });
});

describe('the Standard Webhooks worked example the docs publish', () => {
  it('is what signStandardWebhook, signWebhook and OpenSSL compute', () => {
    const description = String((JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')) as { info: { description: string } }).info.description);
    const block = description.split('**Standard Webhooks (opt-in).**')[1]!;
    const field = (name: string) => new RegExp(`^${name}: +(.+)$`, 'm').exec(block)![1]!;
    const secret = field('signing secret');
    const [id, timestamp, body] = [field('webhook-id'), Number(field('webhook-timestamp')), field('raw body')];

    expect(librariesTakeSecret(secret)).toBe(true);
    expect(new Webhook(secret).sign(id, new Date(timestamp * 1000), body)).toBe(field('webhook-signature'));
    expect(signStandardWebhook(secret, id, timestamp, body)).toBe(field('webhook-signature'));
    expect(signWebhook(secret, timestamp, body)).toBe(field('X-Service-Signature'));
    expect(opensslSignature(secret, timestamp, body)).toBe(field('X-Service-Signature'));
    // An independent implementation of the Standard Webhooks signature: OpenSSL keyed with the decoded bytes.
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64').toString('hex');
    const mac = execFileSync('openssl', ['dgst', '-sha256', '-mac', 'HMAC', '-macopt', `hexkey:${key}`, '-binary'], { input: Buffer.from(`${id}.${timestamp}.${body}`, 'utf8') });
    expect(`v1,${mac.toString('base64')}`).toBe(field('webhook-signature'));
  });
});
