import { describe, expect, it } from 'vitest';
import { isJobId, newAvatarId, newVideoId, timeOrderedPrefix } from '../../src/domain/ids.ts';

describe('job IDs', () => {
  it('sort in the order they were made, across a change in the number of base-36 digits', () => {
    const times = [0, 35, 36, Date.UTC(2026, 10, 26), Date.UTC(2026, 10, 26) + 1, Date.UTC(3000, 0, 1)];
    const prefixes = times.map((t) => timeOrderedPrefix(t));

    expect(prefixes.every((p) => p.length === 9)).toBe(true);
    expect([...prefixes].sort()).toEqual(prefixes);
  });

  it('keep a random tail of 24 characters after the time part', () => {
    const ids = Array.from({ length: 200 }, () => newAvatarId());

    for (const id of ids) expect(id).toMatch(/^av_[a-z0-9]{9}[a-z0-9]{24}$/);
    expect(new Set(ids.map((id) => id.slice(-24))).size).toBe(ids.length);
    expect(newVideoId()).toMatch(/^vid_[a-z0-9]{33}$/);
  });

  it('made one after another are in order, to the millisecond', async () => {
    const first = newAvatarId();
    const start = Date.now();
    while (Date.now() === start) await new Promise((resolve) => setImmediate(resolve));
    const second = newAvatarId();

    expect(second.slice(0, 12) > first.slice(0, 12)).toBe(true);
  });

  it('accept the all-random IDs made before the time part, and nothing else', () => {
    expect(isJobId('avatar', 'av_0123456789abcdefghijklmn')).toBe(true);
    expect(isJobId('avatar', newAvatarId())).toBe(true);
    expect(isJobId('avatar_video', newVideoId())).toBe(true);
    expect(isJobId('avatar', newVideoId())).toBe(false);
    expect(isJobId('avatar', 'av_0123456789abcdefghijklm')).toBe(false);
    expect(isJobId('avatar', `av_${'a'.repeat(30)}`)).toBe(false);
    expect(isJobId('avatar', `av_${'A'.repeat(24)}`)).toBe(false);
  });
});
