// An avatar's preview is a portrait drawn from its inputs: a real 512x512 picture, the
// same for the same inputs, and visibly another for other props.
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENEROUS_PLAN, startTestService, type TestService } from '../support/harness.ts';

let svc: TestService;
let key: string;

beforeAll(async () => {
  svc = await startTestService();
  key = (await svc.account({ plan: GENEROUS_PLAN, credits: 100_000 })).api_key;
});
afterAll(() => svc?.dispose());

async function previewOf(body: Record<string, unknown>): Promise<{ bytes: Buffer; image: PNG }> {
  const created = await svc.request('POST', '/v1/avatars', { key, json: body });
  const avatar = await svc.waitTerminal(`/v1/avatars/${created.body.id}`, key);
  const res = await fetch(avatar.preview_image_url.replace(svc.config.publicBaseUrl, svc.url));
  expect(res.headers.get('content-type')).toBe('image/png');
  const bytes = Buffer.from(await res.arrayBuffer());
  return { bytes, image: PNG.sync.read(bytes) };
}

const colours = (image: PNG) => new Set(Array.from({ length: image.width * image.height }, (_, i) => image.data.readUInt32BE(i * 4))).size;

/** Share of pixels that differ between two images of one size. */
function differing(a: PNG, b: PNG): number {
  let n = 0;
  for (let i = 0; i < a.data.length; i += 4) if (a.data.readUInt32BE(i) !== b.data.readUInt32BE(i)) n++;
  return n / (a.width * a.height);
}

const props = { type: 'props', name: 'Ama', ethnicity: 'Black', sex: 'female', age: 28 };

describe('the preview of an avatar', () => {
  it('is a 512x512 portrait, not a flat colour', async () => {
    const { image } = await previewOf(props);

    expect([image.width, image.height]).toEqual([512, 512]);
    expect(colours(image)).toBeGreaterThan(20);
  });

  it('is the same picture for the same inputs', async () => {
    const [first, second] = [await previewOf(props), await previewOf(props)];

    expect(second.bytes.equals(first.bytes)).toBe(true);
  });

  it('differs visibly between avatars with other props', async () => {
    const young = await previewOf(props);
    const older = await previewOf({ ...props, ethnicity: 'White', sex: 'male', age: 74 });

    expect(differing(young.image, older.image)).toBeGreaterThan(0.05);
  });

  it('is drawn for a prompt avatar too, seeded from its inputs', async () => {
    const a = await previewOf({ type: 'prompt', name: 'Noor', prompt: 'A calm news presenter' });
    const b = await previewOf({ type: 'prompt', name: 'Noor', prompt: 'A cheerful chef in a kitchen' });

    expect([a.image.width, a.image.height]).toEqual([512, 512]);
    expect(a.bytes.equals(b.bytes)).toBe(false);
  });
});
