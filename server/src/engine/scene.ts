// What a video's frames are made of, drawn as SVG and rendered with resvg: a backdrop
// with the avatar's name, the portrait in a round frame (at rest, mouth open, mouth
// rounded) and one picture per caption. The encoder (video.ts) moves the portrait and
// lays the captions over the backdrop frame by frame. Text is set in DejaVu Sans Bold, a
// font file from npm loaded explicitly (never the system's fonts), so a frame is the same
// on every machine.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { Resvg, type ResvgRenderOptions } from '@resvg/resvg-js';
import type { AvatarInput, VideoInput } from '../domain/model.ts';
import { escapeXml } from './markup.ts';
import { avatarSeed, portraitSvg } from './portrait.ts';
import { VIDEO_SIZE } from './timeline.ts';

/** The captions' and the name's typeface (DejaVu fonts licence, a free licence like Bitstream Vera's). */
const FONT_FILE = createRequire(import.meta.url).resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf');
const FONT_FAMILY = 'DejaVu Sans';
const RENDER: ResvgRenderOptions = { font: { fontFiles: [FONT_FILE], loadSystemFonts: false, defaultFontFamily: FONT_FAMILY } };

/** Where things go in a frame of one aspect ratio, in pixels. */
export interface Layout {
  width: number;
  height: number;
  /** The round portrait: its diameter and centre, and how far it sways (x) and bobs (y) while speaking. */
  portrait: { size: number; cx: number; cy: number; swayX: number; bobY: number };
  /** The band of the frame that shows captions: its top and height, the text's size and widest line. */
  caption: { top: number; height: number; fontSize: number; maxWidth: number };
  /** The avatar's name: its baseline, size and alignment. */
  name: { x: number; y: number; fontSize: number; anchor: 'start' | 'middle' };
}

export const LAYOUTS: Record<VideoInput['aspect_ratio'], Layout> = {
  '9:16': {
    ...VIDEO_SIZE['9:16'],
    portrait: { size: 520, cx: 360, cy: 520, swayX: 4, bobY: 9 },
    caption: { top: 880, height: 300, fontSize: 46, maxWidth: 620 },
    name: { x: 360, y: 150, fontSize: 36, anchor: 'middle' },
  },
  '16:9': {
    ...VIDEO_SIZE['16:9'],
    portrait: { size: 400, cx: 640, cy: 262, swayX: 4, bobY: 7 },
    caption: { top: 478, height: 220, fontSize: 42, maxWidth: 1080 },
    name: { x: 48, y: 72, fontSize: 30, anchor: 'start' },
  },
  '1:1': {
    ...VIDEO_SIZE['1:1'],
    portrait: { size: 380, cx: 360, cy: 262, swayX: 3, bobY: 6 },
    caption: { top: 476, height: 224, fontSize: 38, maxWidth: 640 },
    name: { x: 36, y: 58, fontSize: 26, anchor: 'start' },
  },
};

/** Backdrops, top colour to bottom colour; an avatar's inputs choose one. */
const BACKDROPS: [string, string][] = [
  ['#dde8f6', '#a7bfdf'],
  ['#f6e8dc', '#dfb89c'],
  ['#e1f1e7', '#a3cfb2'],
  ['#ece4f6', '#c1a9de'],
  ['#f5f0da', '#d9cb8e'],
  ['#ddf0f2', '#9ccdd4'],
];

function render(svg: string): Buffer {
  return new Resvg(svg, RENDER).render().asPng();
}

function pick<T>(items: readonly T[], seed: string): T {
  return items[createHash('sha256').update(seed).digest().readUInt32BE(0) % items.length]!;
}

/** The backdrop: a gradient chosen by the avatar's inputs, a soft shadow under the portrait, the name on top. */
export function backdropPng(layout: Layout, avatar: AvatarInput): Buffer {
  const { width, height, portrait: p, name } = layout;
  const [top, bottom] = pick(BACKDROPS, avatarSeed(avatar));
  const label = avatar.name.length > 40 ? `${avatar.name.slice(0, 39)}…` : avatar.name;
  return render(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
      `<defs><linearGradient id="bg" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${top}"/><stop offset="1" stop-color="${bottom}"/></linearGradient>` +
      `<radialGradient id="shadow"><stop offset="0.8" stop-color="#1b2a41" stop-opacity="0.22"/><stop offset="1" stop-color="#1b2a41" stop-opacity="0"/></radialGradient></defs>` +
      `<rect width="${width}" height="${height}" fill="url(#bg)"/>` +
      `<circle cx="${p.cx}" cy="${p.cy + p.size * 0.03}" r="${p.size * 0.56}" fill="url(#shadow)"/>` +
      `<text x="${name.x}" y="${name.y}" font-family="${FONT_FAMILY}" font-weight="bold" font-size="${name.fontSize}" fill="#1b2a41" fill-opacity="0.85" text-anchor="${name.anchor}">${escapeXml(label)}</text>` +
      `</svg>`,
  );
}

/** The portrait in its round frame, transparent around it: at rest, or speaking with its mouth open or rounded. */
export function portraitPng(layout: Layout, avatar: AvatarInput, mouth?: 'open' | 'round'): Buffer {
  const { size } = layout.portrait;
  const r = size / 2;
  const ring = Math.max(4, Math.round(size / 80));
  // The drawing nested at the frame's size: its own width and height give way to ours.
  const face = portraitSvg(avatar, mouth).replace(/^<svg\b[^>]*>/u, (tag) => tag.replace(/\s(?:width|height)="[^"]*"/gu, '').replace(/^<svg\b/u, `<svg width="${size}" height="${size}"`));
  return render(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}">` +
      `<defs><clipPath id="round"><circle cx="${r}" cy="${r}" r="${r - ring}"/></clipPath></defs>` +
      `<circle cx="${r}" cy="${r}" r="${r}" fill="#ffffff"/>` +
      `<g clip-path="url(#round)">${face}</g>` +
      `</svg>`,
  );
}

/** Measures text in the captions' font; word widths are kept, since scripts repeat them. */
export function createMeasure(): (text: string, fontSize: number) => number {
  const EM = 100;
  const widths = new Map<string, number>();
  const width = (text: string) => {
    let w = widths.get(text);
    if (w === undefined) {
      const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${EM * (text.length + 2)}" height="${EM * 2}"><text x="${EM}" y="${EM * 1.5}" font-family="${FONT_FAMILY}" font-weight="bold" font-size="${EM}">${escapeXml(text)}</text></svg>`;
      w = new Resvg(svg, RENDER).getBBox()?.width ?? 0;
      widths.set(text, w);
    }
    return w;
  };
  // A box holds the ink, not the advance: a word's advance is what it adds between two Hs.
  const advance = (word: string) => width(`H${word}H`) - width('HH');
  return (text, fontSize) => {
    const words = text.split(' ');
    const total = words.reduce((sum, word) => sum + advance(word), 0) + (words.length - 1) * advance(' ');
    return (total * fontSize) / EM;
  };
}

/**
 * A caption's lines: words filled greedily into lines no wider than `maxWidth`. A word
 * wider than a line by itself (a link, say) is cut into pieces about a line wide.
 */
export function wrapCaption(text: string, fontSize: number, maxWidth: number, measure: (text: string, fontSize: number) => number): string[] {
  const lines: string[] = [];
  const pieces = text.split(' ').flatMap((word) => {
    const width = measure(word, fontSize);
    if (width <= maxWidth) return [word];
    const chars = [...word];
    const perLine = Math.max(1, Math.floor((maxWidth / width) * chars.length));
    return Array.from({ length: Math.ceil(chars.length / perLine) }, (_, i) => chars.slice(i * perLine, (i + 1) * perLine).join(''));
  });
  for (const piece of pieces) {
    const last = lines.at(-1);
    if (last !== undefined && measure(`${last} ${piece}`, fontSize) <= maxWidth) lines[lines.length - 1] = `${last} ${piece}`;
    else lines.push(piece);
  }
  return lines;
}

/** Lines of a caption at most at its size; a caption that needs more is set smaller. */
const CAPTION_MAX_LINES = 2;
/** The smallest a caption is set, as a share of the layout's size. */
const CAPTION_MIN_SCALE = 0.6;
/** Lines a caption never goes past, even at its smallest: what is left is cut, with an ellipsis. */
const CAPTION_HARD_MAX_LINES = 3;

/** Padding of a caption's box around its lines, at a font size. */
const captionPadX = (fontSize: number) => Math.round(fontSize * 0.6);
const captionPadY = (fontSize: number) => Math.round(fontSize * 0.4);
const captionLineHeight = (fontSize: number) => Math.round(fontSize * 1.3);
/** Pixels kept clear around the largest box in a caption's picture. */
const CAPTION_MARGIN = 2;

/**
 * The part of the caption band that a caption's picture covers, in the band's pixels:
 * the widest and tallest box a caption can have (lines as wide as a line may be, two at
 * full size or three at the smallest, the only size that has three), centred, at even offsets
 * (the encoder's colour planes have half the pixels). The rest of the band is always
 * clear, and laying a smaller picture over the frame costs the encoder less every frame.
 */
export function captionArea(layout: Layout): { x: number; y: number; width: number; height: number } {
  const { fontSize, maxWidth, height } = layout.caption;
  const widest = maxWidth + 2 * captionPadX(fontSize) + 2 * CAPTION_MARGIN;
  const boxHeight = (lines: number, size: number) => lines * captionLineHeight(size) + 2 * captionPadY(size);
  const smallest = fontSize * CAPTION_MIN_SCALE;
  const tallest = Math.max(boxHeight(CAPTION_MAX_LINES, fontSize), boxHeight(CAPTION_HARD_MAX_LINES, smallest)) + 2 * CAPTION_MARGIN;
  const even = (n: number) => Math.max(0, Math.floor(n / 2) * 2);
  const x = even((layout.width - widest) / 2);
  const y = even((height - tallest) / 2);
  return { x, y, width: layout.width - 2 * x, height: height - 2 * y };
}

/**
 * A caption's picture, the caption band's captionArea, transparent but for the text:
 * white bold lines on a dark rounded box, centred in the band. An empty text gives a
 * picture with nothing on it (the gaps between captions).
 */
export function captionPng(layout: Layout, text: string, measure: (text: string, fontSize: number) => number): Buffer {
  const { width } = layout;
  const { height, maxWidth } = layout.caption;
  let fontSize = layout.caption.fontSize;
  let lines = text ? wrapCaption(text, fontSize, maxWidth, measure) : [];
  while (lines.length > CAPTION_MAX_LINES && fontSize > layout.caption.fontSize * CAPTION_MIN_SCALE) {
    fontSize = Math.round(fontSize * 0.9);
    lines = wrapCaption(text, fontSize, maxWidth, measure);
  }
  if (lines.length > CAPTION_HARD_MAX_LINES) lines = [...lines.slice(0, CAPTION_HARD_MAX_LINES - 1), `${lines[CAPTION_HARD_MAX_LINES - 1]}…`];
  const lineHeight = captionLineHeight(fontSize);
  const padX = captionPadX(fontSize);
  const padY = captionPadY(fontSize);
  const widths = lines.map((line) => Math.min(maxWidth, measure(line, fontSize)));
  const boxWidth = Math.max(0, ...widths) + 2 * padX;
  const boxHeight = lines.length * lineHeight + 2 * padY;
  const boxTop = Math.round((height - boxHeight) / 2);
  const texts = lines.map((line, i) => {
    // A line the measure got slightly wrong is squeezed to the line's width rather than cut.
    const squeeze = measure(line, fontSize) > maxWidth ? ` textLength="${maxWidth}" lengthAdjust="spacingAndGlyphs"` : '';
    const baseline = boxTop + padY + i * lineHeight + Math.round(lineHeight * 0.5 + fontSize * 0.36);
    return `<text x="${width / 2}" y="${baseline}" font-family="${FONT_FAMILY}" font-weight="bold" font-size="${fontSize}" fill="#ffffff" text-anchor="middle"${squeeze}>${escapeXml(line)}</text>`;
  });
  const box = lines.length > 0 ? `<rect x="${Math.round((width - boxWidth) / 2)}" y="${boxTop}" width="${Math.round(boxWidth)}" height="${boxHeight}" rx="${Math.round(fontSize * 0.4)}" fill="#0d1421" fill-opacity="0.78"/>` : '';
  // Drawn in the band's coordinates; the view box cuts the picture's area out of the band.
  const area = captionArea(layout);
  return render(`<svg xmlns="http://www.w3.org/2000/svg" width="${area.width}" height="${area.height}" viewBox="${area.x} ${area.y} ${area.width} ${area.height}">${box}${texts.join('')}</svg>`);
}
