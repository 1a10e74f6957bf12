import { validationFailed } from '../domain/errors.ts';
import { HttpProblem } from './problem.ts';
import type { RequestValidator } from './requestValidator.ts';
import type { AppContext } from './state.ts';

/** Largest request body accepted (ND-ERRORS: 413 payload_too_large). */
export const MAX_BODY_BYTES = 64 * 1024;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i;

async function readLimited(ctx: AppContext): Promise<Buffer> {
  const declared = Number(ctx.get('Content-Length') || 0);
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const tooLarge = () => new HttpProblem('payload_too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes.`);

/**
 * Step 3 of a POST: media type (415), size (413), JSON syntax (400), then the contract's
 * schema (422 with every broken rule). Returns the body typed as the schema says.
 */
export async function readValidBody<T>(ctx: AppContext, validator: RequestValidator, schemaName: string): Promise<T> {
  const type = ctx.get('Content-Type');
  if (!JSON_TYPE.test(type)) {
    throw new HttpProblem(
      'unsupported_media_type',
      type ? `Send the body as "Content-Type: application/json"; received "${type.slice(0, 100)}".` : 'Send the body as "Content-Type: application/json".',
    );
  }
  const raw = await readLimited(ctx);
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw new HttpProblem('invalid_json', `The request body is not valid JSON: ${(error as Error).message}.`);
  }
  const fields = validator.validate(schemaName, body);
  if (fields.length > 0) throw validationFailed(fields);
  return body as T;
}
