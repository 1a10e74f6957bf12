import { randomBytes } from 'node:crypto';
import { AVATAR_READY, defineReceiverCheck, expectAccepted, expectRefused } from '../check.ts';
import { usualForm } from '../events.ts';

/** One byte of a string value changed: still JSON, still the same members, so only the signature can tell. */
function changeOneByte(body: Buffer, name: string): Buffer {
  const text = body.toString('utf8');
  const quoted = JSON.stringify(name);
  const at = text.indexOf(quoted);
  const position = at >= 0 ? at + 1 : text.lastIndexOf('"') - 1;
  const out = Buffer.from(body);
  const byte = out[position]!;
  // A letter changes case, anything else becomes a letter: never a quote or a backslash.
  out[position] = byte >= 0x61 && byte <= 0x7a ? byte - 0x20 : byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : 0x78;
  return out;
}

export default defineReceiverCheck({
  id: 'receiver.signature-verified',
  title: 'A delivery whose signature does not hold is refused',
  asserts:
    'Deliveries of a new event are answered with a non-2xx status when one byte of the body was changed after signing, when the signature was made with another secret, when the signature header is missing, when it is garbled, and when it is the right digest without the scheme prefix (v1=); the same event correctly signed is then answered 2xx.',
  clauses: ['WH-RECEIVER-VERIFY', 'WH-SIGNATURE'],
  deliveries: 6,
  async run(ctx) {
    const event = ctx.events.make(AVATAR_READY);
    const name = String((event.body.data as { object?: { name?: unknown } } | undefined)?.object?.name ?? '');
    const body = usualForm(event.body);
    const timestamp = ctx.sender.nowSeconds();
    const good = ctx.sender.signature(timestamp, body);
    const prefix = ctx.profile.webhookFormat.signaturePrefix;
    const header = ctx.profile.webhookFormat.headers.signature;
    const fix = `compute ${prefix}<hex HMAC-SHA256 of "\${timestamp}.\${rawBody}"> with the signing secret over the bytes received, compare it in constant time with ${header}, and answer 400 or 401 when it differs or is missing`;
    const cases = [
      { label: 'the event with one byte of its body changed after signing', options: { body: changeOneByte(body, name), signedBody: body }, why: 'the signature covers every byte of the body, so a changed body must not verify' },
      { label: 'the event signed with another secret', options: { secret: `whsec_${randomBytes(24).toString('base64url')}` }, why: 'only the signing secret proves the sender' },
      { label: `the event without ${header}`, options: { signature: null }, why: 'an unsigned delivery proves nothing' },
      { label: `the event with a garbled ${header}`, options: { signature: `${prefix}${good.slice(prefix.length, prefix.length + 20)}%%not-hex%%` }, why: 'a signature that is not a digest cannot verify' },
      { label: `the event signed without the ${prefix} prefix`, options: { signature: good.slice(prefix.length) }, why: `the scheme is named by its prefix (${prefix}); a bare digest is not a signature of this scheme` },
    ];
    for (const { label, options, why } of cases) {
      expectRefused(await ctx.deliver(event, { label, timestamp, ...options }), 'WH-RECEIVER-VERIFY', why, fix);
    }
    expectAccepted(
      await ctx.deliver(event, { label: 'the same event correctly signed, after those', timestamp }),
      'WH-RECEIVER-VERIFY',
      'the forged deliveries must leave the authentic one acknowledged',
      'refuse a forged delivery without recording its event ID as processed',
    );
  },
});
