import { MAX_BODY_BYTES, bodyTooLarge, refuseMediaType, validJsonBody, type RequestValidator } from './requestValidator.ts';
import type { AppContext } from './state.ts';

async function readLimited(ctx: AppContext): Promise<Buffer> {
  const declared = Number(ctx.get('Content-Length') || 0);
  if (declared > MAX_BODY_BYTES) throw bodyTooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw bodyTooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Step 3 of a POST: media type (415), size (413), JSON syntax (400), then the contract's
 * schema (422 with every broken rule). Returns the body typed as the schema says. The
 * rules but the reading are requestValidator.ts's, which the MSW mock applies too.
 */
export async function readValidBody<T>(ctx: AppContext, validator: RequestValidator, schemaName: string): Promise<T> {
  refuseMediaType(ctx.get('Content-Type'));
  return validJsonBody<T>(validator, schemaName, await readLimited(ctx));
}
