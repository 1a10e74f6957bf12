import { AVATAR_READY, defineReceiverCheck, expectAccepted } from '../check.ts';
import { unusualForm } from '../events.ts';

export default defineReceiverCheck({
  id: 'receiver.raw-body-verified',
  title: 'The signature is checked over the bytes received, not over JSON written again',
  asserts:
    'A new event written with tabs and spaces, its members in reverse order and its slashes and non-ASCII characters escaped, signed over exactly those bytes, is answered 2xx: a receiver that parses the body and serializes it again before verifying computes its signature over other bytes and refuses it.',
  clauses: ['WH-RECEIVER-VERIFY'],
  deliveries: 1,
  async run(ctx) {
    // A name with characters outside ASCII, as names are: the escaped form differs from any re-serialization.
    const event = ctx.events.make(AVATAR_READY, (record) => {
      if (typeof record.name === 'string') record.name = `Zoë, ${record.name.split(', ').slice(1).join(', ') || 'créatrice'} 🎬`;
    });
    const body = Buffer.from(unusualForm(event.body), 'utf8');
    expectAccepted(
      await ctx.deliver(event, { label: 'a valid event in another JSON form (whitespace, member order, escapes), signed over those bytes', body }),
      'WH-RECEIVER-VERIFY',
      'the signature covers the raw body as sent; the same JSON written differently is the same event, and a sender may write it either way',
      'verify over the raw request bytes before any JSON parsing (mount the verifier before a body parser, or keep the raw body), never over JSON.stringify of the parsed body',
    );
  },
});
