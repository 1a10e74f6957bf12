// The signing secret as the operator command prints it, handed as it is to the official
// Standard Webhooks library (standardwebhooks on npm), as an integrator's receiver would,
// against real deliveries of a local server: the secrets of fresh accounts and of
// rotations verify as printed, and an account whose secret was made URL-safe, before
// secrets were standard base64, keeps what its receivers verify under both schemes.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../client/src/verify.ts';
import { adminCommand } from './support/adminCommand.ts';
import { promptAvatar, startTestService, type TestService } from './support/harness.ts';

/** What the libraries' base64 decoder takes: the standard alphabet, no `-` or `_`. */
const LIBRARY_SECRET = /^whsec_[A-Za-z0-9+/]{32}$/;
/** Enough accounts that, in the URL-safe alphabet, some secrets would have held `-` or `_` (each about 64% of the time). */
const FRESH_ACCOUNTS = 4;

interface Delivery {
  headers: Record<string, string>;
  rawBody: string;
}

let svc: TestService;
let receiverUrl: string;
let closeReceiver: () => Promise<void>;
const waiting = new Map<string, (delivery: Delivery) => void>();

beforeAll(async () => {
  svc = await startTestService({ env: { WEBHOOK_POLL_MS: '20' } });
  // Each delivery settles the promise its path was awaited with; the test judges it.
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.end('ok');
      waiting.get(req.url ?? '/')?.({ headers: headersOf(req.headers), rawBody: Buffer.concat(chunks).toString('utf8') });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closeReceiver = () => new Promise((r) => (server.closeAllConnections(), server.close(() => r())));
});
afterAll(async () => {
  await closeReceiver?.();
  await svc?.dispose();
});

function headersOf(raw: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(raw).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : (value ?? '')]));
}

const { admin, json } = adminCommand(() => svc.storeEnv.env);

/** Creates an avatar whose job ends with a webhook to `path`, and resolves with that delivery. */
async function deliveryOf(key: string, path: string): Promise<Delivery> {
  const arrived = new Promise<Delivery>((resolve) => waiting.set(path, resolve));
  const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ webhook_url: receiverUrl + path }) });
  expect(created.status).toBe(202);
  return arrived;
}

describe('set-standard-webhooks --on for fresh accounts, then rotate-signing-secret', () => {
  let accounts: { account_id: string; api_key: string; signing_secret: string }[];
  let opted: Record<string, string>[];
  beforeAll(async () => {
    accounts = await Promise.all(Array.from({ length: FRESH_ACCOUNTS }, () => json('create-account', '--credits', '100')));
    opted = await Promise.all(accounts.map((a) => json('set-standard-webhooks', '--account', a.account_id, '--on')));
  });

  it('prints each new secret in the form the library takes, and that secret, as printed, verifies a real delivery under both header sets', async () => {
    const deliveries = await Promise.all(accounts.map((a) => deliveryOf(a.api_key, `/fresh/${a.account_id}`)));

    accounts.forEach((account, i) => {
      const printed = opted[i]!;
      const { headers, rawBody } = deliveries[i]!;
      expect(account.signing_secret).toMatch(LIBRARY_SECRET);
      expect(printed).toEqual({
        account_id: account.account_id,
        standard_webhooks: true,
        signing_secret: account.signing_secret,
        note: 'webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks) now come beside X-Service-Event-Id, X-Service-Timestamp and X-Service-Signature; this signing_secret, as printed, verifies both',
      });
      const event = new Webhook(printed.signing_secret!).verify(rawBody, headers) as { id: string };
      expect(event.id).toBe(headers['webhook-id']);
      expect(verifyWebhook({ rawBody, headers, secret: printed.signing_secret!, scheme: 'service' }).id).toBe(event.id);
    });
  });

  it('prints the secret and the line naming the header sets on the terminal too', async () => {
    const exit = await admin('set-standard-webhooks', '--account', accounts[0]!.account_id, '--on');

    expect(exit.code).toBe(0);
    expect(exit.stdout.split('\n')).toEqual(
      expect.arrayContaining([`signing_secret: ${accounts[0]!.signing_secret}`, expect.stringMatching(/^note: webhook-id, webhook-timestamp and webhook-signature \(Standard Webhooks\) now come beside X-Service-Event-Id, X-Service-Timestamp and X-Service-Signature; .* verifies both$/)]),
    );
  });

  it('after a rotation, the library takes the new secret as printed and verifies the next delivery, which the old secret no longer does', async () => {
    const rotated = await Promise.all(accounts.map((a) => json('rotate-signing-secret', '--account', a.account_id)));

    const deliveries = await Promise.all(accounts.map((a) => deliveryOf(a.api_key, `/rotated/${a.account_id}`)));

    accounts.forEach((account, i) => {
      const secret = rotated[i]!.signing_secret as string;
      const { headers, rawBody } = deliveries[i]!;
      expect(secret).toMatch(LIBRARY_SECRET);
      expect(secret).not.toBe(account.signing_secret);
      expect((new Webhook(secret).verify(rawBody, headers) as { id: string }).id).toBe(headers['webhook-id']);
      expect(verifyWebhook({ rawBody, headers, secret, scheme: 'service' }).id).toBe(headers['x-service-event-id']);
      expect(() => new Webhook(account.signing_secret).verify(rawBody, headers)).toThrow(/No matching signature found/);
    });
  });
});

describe('an account whose secret was made URL-safe, before secrets were standard base64', () => {
  /** As the service made secrets before, with both `-` and `_`, which the libraries refuse. */
  function oldSecret(): string {
    for (;;) {
      const secret = `whsec_${randomBytes(24).toString('base64url')}`;
      if (secret.includes('-') && secret.includes('_')) return secret;
    }
  }

  it("keeps X-Service-Signature keyed with the secret's text byte for byte, prints the same key as the library takes it beside it, and rotation gives one secret for both", async () => {
    const account = await json('create-account', '--credits', '100');
    const stored = oldSecret();
    await svc.store.accounts.setSigningSecret(account.account_id, stored);

    const printed = await json('set-standard-webhooks', '--account', account.account_id, '--on');
    const { headers, rawBody } = await deliveryOf(account.api_key, '/old');

    // The source's scheme: the HMAC keyed with the secret's text, as its receivers verify it today.
    const timestamp = headers['x-service-timestamp']!;
    expect(headers['x-service-signature']).toBe(`v1=${createHmac('sha256', Buffer.from(stored, 'utf8')).update(`${timestamp}.${rawBody}`).digest('hex')}`);
    expect(verifyWebhook({ rawBody, headers, secret: stored, scheme: 'service' }).id).toBe(headers['x-service-event-id']);
    // Standard Webhooks: keyed with the bytes the URL-safe base64 encodes, as before.
    const key = Buffer.from(stored.slice('whsec_'.length), 'base64url');
    expect(headers['webhook-signature']).toBe(`v1,${createHmac('sha256', key).update(`${headers['webhook-id']}.${timestamp}.${rawBody}`).digest('base64')}`);
    // What the operator command prints for it: the text for X-Service-Signature, the same key for the libraries.
    expect(printed.signing_secret).toBe(stored);
    expect(printed.standard_webhooks_secret).toBe(`whsec_${key.toString('base64')}`);
    expect(printed.note).toMatch(new RegExp(`standard_webhooks_secret; rotate-signing-secret --account ${account.account_id} makes one secret that verifies both as printed`));
    expect(() => new Webhook(stored)).toThrow(/incorrect characters/);
    expect((new Webhook(printed.standard_webhooks_secret).verify(rawBody, headers) as { id: string }).id).toBe(headers['webhook-id']);

    const rotated = await json('rotate-signing-secret', '--account', account.account_id);
    const next = await deliveryOf(account.api_key, '/old-rotated');

    expect(rotated.signing_secret).toMatch(LIBRARY_SECRET);
    expect((new Webhook(rotated.signing_secret).verify(next.rawBody, next.headers) as { id: string }).id).toBe(next.headers['webhook-id']);
    expect(verifyWebhook({ rawBody: next.rawBody, headers: next.headers, secret: rotated.signing_secret, scheme: 'service' }).id).toBe(next.headers['x-service-event-id']);
  });
});
