import type { Report } from './model.ts';

export function toJson(report: Report): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
