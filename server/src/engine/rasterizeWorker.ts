// Runs on the rasterizer's worker thread (rasterizer.ts): SVG in, PNG out. Rendering takes
// tens of milliseconds of CPU, which the API's event loop must never spend.
import { Resvg } from '@resvg/resvg-js';

export interface RasterizeTask {
  svg: string;
  /** Width of the PNG in pixels; the height follows the drawing's aspect. */
  width: number;
}

export default function rasterize({ svg, width }: RasterizeTask): Uint8Array {
  return new Resvg(svg, { fitTo: { mode: 'width', value: width }, font: { loadSystemFonts: false } }).render().asPng();
}
