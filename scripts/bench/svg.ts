// The read comparison as a horizontal bar chart, written as SVG by hand (no chart
// library): one bar per target, its median req/s and its share of the ceiling.

export interface Bar {
  label: string;
  value: number;
  /** Shown after the value, e.g. "41% of bare Koa". */
  note?: string;
  kind: 'ceiling' | 'server' | 'mock' | 'diagnostic' | 'scale';
}

const COLOURS: Record<Bar['kind'], string> = {
  ceiling: '#6b7280',
  server: '#2563eb',
  mock: '#d97706',
  diagnostic: '#93c5fd',
  scale: '#1e40af',
};

const WIDTH = 860;
const LABEL_WIDTH = 300;
const VALUE_WIDTH = 230;
const BAR_HEIGHT = 22;
const GAP = 10;
const TOP = 62;
const BOTTOM = 40;

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

/** A round axis maximum at or above `max`: 1, 2 or 5 times a power of ten. */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

export function barChart(bars: readonly Bar[], title: string, subtitle: string): string {
  const plotWidth = WIDTH - LABEL_WIDTH - VALUE_WIDTH;
  const height = TOP + bars.length * (BAR_HEIGHT + GAP) + BOTTOM;
  const axisMax = niceMax(Math.max(...bars.map((b) => b.value), 0));
  const x = (value: number) => LABEL_WIDTH + (Math.max(0, value) / axisMax) * plotWidth;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="13">`);
  out.push(`<title>${escapeXml(title)}</title>`);
  out.push(`<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="16" y="24" font-size="16" font-weight="600" fill="#111827">${escapeXml(title)}</text>`);
  out.push(`<text x="16" y="44" fill="#4b5563">${escapeXml(subtitle)}</text>`);
  // Grid lines at fifths of the axis.
  const plotBottom = TOP + bars.length * (BAR_HEIGHT + GAP) - GAP / 2;
  for (let i = 0; i <= 5; i++) {
    const value = (axisMax / 5) * i;
    const gx = x(value).toFixed(1);
    out.push(`<line x1="${gx}" y1="${TOP - 6}" x2="${gx}" y2="${plotBottom}" stroke="#e5e7eb" stroke-width="1"/>`);
    out.push(`<text x="${gx}" y="${plotBottom + 16}" text-anchor="middle" fill="#6b7280" font-size="11">${escapeXml(formatAxis(value))}</text>`);
  }
  out.push(`<text x="${LABEL_WIDTH + plotWidth / 2}" y="${plotBottom + 32}" text-anchor="middle" fill="#6b7280" font-size="11">requests per second (median of rounds)</text>`);
  bars.forEach((bar, i) => {
    const y = TOP + i * (BAR_HEIGHT + GAP);
    const width = Math.max(1, x(bar.value) - LABEL_WIDTH);
    const text = `${Math.round(bar.value).toLocaleString('en-US')}/s${bar.note ? ` · ${bar.note}` : ''}`;
    out.push(`<text x="${LABEL_WIDTH - 10}" y="${y + BAR_HEIGHT / 2 + 4}" text-anchor="end" fill="#111827">${escapeXml(bar.label)}</text>`);
    out.push(`<rect x="${LABEL_WIDTH}" y="${y}" width="${width.toFixed(1)}" height="${BAR_HEIGHT}" rx="3" fill="${COLOURS[bar.kind]}"><title>${escapeXml(`${bar.label}: ${text}`)}</title></rect>`);
    out.push(`<text x="${(LABEL_WIDTH + width + 8).toFixed(1)}" y="${y + BAR_HEIGHT / 2 + 4}" fill="#374151">${escapeXml(text)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function formatAxis(value: number): string {
  if (value >= 1000) return `${Math.round(value / 100) / 10}k`;
  return String(Math.round(value));
}
