// The file checks against the reference fixture's files served otherwise: what a profile
// claims is held to (a record's length, captions within the video, byte ranges and
// If-Range), and what it does not claim is not (a server that ignores Range, a length the
// record does not state). Only the file checks run: a run of them takes a second or two.
import { describe, expect, it } from 'vitest';
import { CONTRACT_PROFILE, parseProfile } from '../src/implementation/profile.ts';
import type { Report } from '../src/report/model.ts';
import { startFixture, type FixtureConfig, type Flaws } from './fixtures/reference.ts';
import { run } from './helpers.ts';

const FILE_CHECKS = ['videos.ready-url-serves-mp4', 'videos.ready-url-answers-ranges', 'videos.captions-are-webvtt', 'avatars.preview-image-decodes'];

/** The contract's file members, with ranges not claimed. */
const NO_RANGES = parseProfile({ profile: 1, files: { duration: '/duration_seconds', captions: '/captions_url', preview: '/preview_image_url', ranges: false } });
/** Another implementation that says nothing of its files: the source's video_url alone. */
const SOURCE_ONLY = parseProfile({ profile: 1 });

async function fileChecks(setup: { flaws?: Partial<Flaws>; config?: Partial<FixtureConfig> }, implementation?: ReturnType<typeof parseProfile>): Promise<Record<string, string>> {
  const fixture = await startFixture(setup);
  try {
    const report: Report = await run(fixture, 'core', { only: FILE_CHECKS, ...(implementation ? { implementation } : {}) });
    return Object.fromEntries(report.results.filter((r) => FILE_CHECKS.includes(r.id)).map((r) => [r.id, `${r.outcome}${r.failure ? ` ${r.failure.clause}: ${r.failure.message}` : ''}${r.reason ? `: ${r.reason}` : ''}`]));
  } finally {
    await fixture.close();
  }
}

describe.concurrent('the file checks', () => {
  it('when the files are whole to every request, then a profile that claims no ranges passes, and the contract, which claims them, fails the range check alone', async () => {
    const [unclaimed, claimed] = await Promise.all([fileChecks({ config: { fileRanges: false } }, NO_RANGES), fileChecks({ config: { fileRanges: false } })]);

    expect(unclaimed).toEqual(Object.fromEntries(FILE_CHECKS.map((id) => [id, 'passed'])));
    expect(claimed['videos.ready-url-answers-ranges']).toMatch(/^failed ND-VIDEO-FIELDS: ready video \S+'s video_url answered Range: bytes=0-99 with 200$/);
    expect(Object.values(claimed).filter((outcome) => outcome.startsWith('failed'))).toHaveLength(1);
  }, 60_000);

  it('when the record states a length two seconds longer than its MP4, then the video check fails on the decision, and passes where the profile names no length', async () => {
    const [contract, source] = await Promise.all([fileChecks({ flaws: { durationOff: true } }), fileChecks({ flaws: { durationOff: true } }, SOURCE_ONLY)]);

    expect(contract['videos.ready-url-serves-mp4']).toMatch(/^failed ND-VIDEO-FIELDS: ready video \S+ states 8\.4 s at \/duration_seconds, but its MP4 lasts 6\.400 s$/);
    expect(source).toEqual({
      'videos.ready-url-serves-mp4': 'passed',
      'videos.ready-url-answers-ranges': 'passed',
      'videos.captions-are-webvtt': 'not_applicable: the implementation profile names no captions (files.captions)',
      'avatars.preview-image-decodes': 'not_applicable: the implementation profile names no preview image (files.preview)',
    });
  }, 60_000);

  it('when a caption ends after the video, then the captions check fails naming the cue', async () => {
    const outcomes = await fileChecks({ flaws: { captionsPastEnd: true } });

    expect(outcomes['videos.captions-are-webvtt']).toMatch(/^failed ND-VIDEO-FIELDS: ready video \S+'s captions \(\S+\) has a cue ending at 7\.4 s, after the video's 6\.400 s$/);
  }, 60_000);

  it('when a range is sent whatever If-Range names, then the range check fails citing RFC 9110', async () => {
    const outcomes = await fileChecks({ flaws: { ifRangeIgnored: true } });

    expect(outcomes['videos.ready-url-answers-ranges']).toMatch(/^failed ND-VIDEO-FIELDS: .* If-Range names another entity tag with 206, not the whole file$/);
  }, 60_000);
});

describe("the implementation profile's files member", () => {
  it('when a profile says nothing of its files, then the source\'s video_url alone is downloaded, no ranges claimed; the default is the contract\'s', () => {
    expect(SOURCE_ONLY.files).toMatchObject({ video: '/video_url', duration: null, captions: null, preview: null, ranges: false });
    expect(CONTRACT_PROFILE.files).toMatchObject({ video: '/video_url', duration: '/duration_seconds', captions: '/captions_url', preview: '/preview_image_url', ranges: true });
  });

  it('when a member breaks its rule, then the profile is refused naming it', () => {
    expect(() => parseProfile({ profile: 1, files: { ranges: 'yes', video: 'video_url', thumbnail: '/thumb' } })).toThrow(
      'files.thumbnail: is not a member of the profile format (additionalProperties); files.video: must match pattern "^(/([^~/]|~[01])*)*$" (pattern); files.ranges: must be boolean (type)',
    );
  });
});
