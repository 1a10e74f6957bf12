// Runs on the engine's worker thread (portraits.ts): an avatar's inputs in, its preview PNG
// out. Drawing and rendering take tens of milliseconds of CPU, which the API's event loop
// must never spend, and their libraries stay out of the main thread's memory.
import { Resvg } from '@resvg/resvg-js';
import type { AvatarInput } from '../domain/model.ts';
import { PORTRAIT_SIZE, portraitSvg } from './portrait.ts';

export default function renderPortrait(input: AvatarInput): Uint8Array {
  const svg = portraitSvg(input);
  return new Resvg(svg, { fitTo: { mode: 'width', value: PORTRAIT_SIZE }, font: { loadSystemFonts: false } }).render().asPng();
}
