// The changelog client developers read: releases newest first under "Unreleased",
// additive changes, then the breaks that were accepted, each with why and what a client
// must do (a break no one accepted, which the gate refuses, first of all), the rest
// counted, and HTML that shows the contract's text as text.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changelogSections, loadUnreleasedNotes, renderHtml, renderMarkdown } from '../changelog.ts';
import type { Release } from '../releases.ts';

type Node = { [key: string]: any };

const FIXTURE = readFileSync(new URL('./fixtures/bundle.json', import.meta.url), 'utf8');
const fixture = (): Node => JSON.parse(FIXTURE) as Node;

const release = (version: string, commit: string, notes: string): Release => ({ version, commit: commit.repeat(40), date: '2026-12-01', notes });

// 1.0.0 is the fixture; 1.1.0 adds an optional member to a shared schema and rewords a
// description; the working bundle then renames a response member.
const v100 = fixture();
const v110 = fixture();
v110.components.schemas.Problem.properties.request_id = { type: 'string' };
v110.components.schemas.Avatar.description = 'An avatar, reworded.';
const working = structuredClone(v110);
const avatar = working.components.schemas.Avatar;
avatar.properties.title = avatar.properties.name;
delete avatar.properties.name;
avatar.required = ['id', 'title', 'status'];

const RELEASES = [release('1.0.0', 'a', 'First release of /v1.'), release('1.1.0', 'b', 'Problems carry a request ID.')];
const BUNDLES: Record<string, Node> = { '1.0.0': v100, '1.1.0': v110 };
const bundleOf = (release: Release) => BUNDLES[release.version]!;

describe('changelogSections', () => {
  it('when there are releases, then Unreleased comes first and releases follow newest first', () => {
    const sections = changelogSections(RELEASES, bundleOf, working);

    expect(sections.map((section) => section.heading)).toEqual(['Unreleased', '1.1.0 (2026-12-01)', '1.0.0 (2026-12-01)']);
    expect(sections[2]).toEqual({ heading: '1.0.0 (2026-12-01)', intro: 'First release of /v1.', changes: [] });
  });

  it('when the working bundle is the last release, then Unreleased says there is nothing new', () => {
    const [unreleased] = changelogSections(RELEASES, bundleOf, v110);

    expect(unreleased).toEqual({ heading: 'Unreleased', intro: 'No changes since 1.1.0.', changes: [] });
  });

  it('when no release is recorded, then Unreleased says so', () => {
    const sections = changelogSections([], bundleOf, working);

    expect(sections).toEqual([{ heading: 'Unreleased', intro: 'No release is recorded yet (openapi/releases.json).', changes: [] }]);
  });
});

describe('renderMarkdown', () => {
  const markdown = renderMarkdown(changelogSections(RELEASES, bundleOf, working), 'Changelog: Fixture API');

  it('lists a break no one accepted before additive changes, saying the gate refuses it', () => {
    const unreleased = between(markdown, '## Unreleased', '## 1.1.0');

    expect(unreleased).toContain('Changes since 1.1.0, not yet released.');
    expect(unreleased).toContain('### Breaking changes\n\nThe breaking-change gate refuses these');
    expect(unreleased.indexOf('### Breaking changes')).toBeLessThan(unreleased.indexOf('### Additive changes'));
    expect(unreleased).toContain('- `name`: response member removed, in `GET /v1/avatars/{id} 200 response`');
    expect(unreleased).toContain('- `title`: response member added, in `GET /v1/avatars/{id} 200 response`');
  });

  it('lists a change to a shared schema once, with every place it reaches', () => {
    const release110 = between(markdown, '## 1.1.0', '## 1.0.0');

    expect(release110).toContain('Problems carry a request ID.');
    expect(release110).not.toContain('### Breaking changes');
    expect(release110).toContain('- `request_id`: response member added, in `POST /v1/avatars 422 response`, `GET /v1/avatars/{id} 404 response`');
    expect(release110).toContain('1 other change that clients do not see');
  });

  it('ends with the first release and its notes', () => {
    expect(markdown.trimEnd().endsWith('## 1.0.0 (2026-12-01)\n\nFirst release of /v1.')).toBe(true);
  });
});

describe('accepted breaks', () => {
  // The working bundle adds a pattern to a request member (a break) that a person accepted,
  // changes the format an ID's description states (a break, accepted with what a client
  // must do) and adds a response member.
  const base = fixture();
  base.components.schemas.Avatar.properties.id.description = 'The avatar ID, `av_` followed by 24 lowercase letters and digits.';
  const head = structuredClone(base);
  head.components.schemas.PromptAvatarCreateRequest.properties.name.pattern = '^[^\\u0000]*$';
  head.components.schemas.Avatar.properties.id.description = 'The avatar ID, `av_` followed by 33 lowercase letters and digits.';
  head.components.schemas.Avatar.properties.preview_url = { type: 'string' };
  const accepted = [
    { rule: 'request constraint tightened', where: ['POST /v1/avatars request body: [From a prompt].name'], date: '2026-12-01', reason: 'Such names were refused already.' },
    { rule: 'ID format documentation changed', where: ['GET /v1/avatars/{id} 200 response: id'], date: '2026-12-01', reason: 'New IDs carry their time.', action: 'Accept 24 or 33 characters after `av_`.' },
  ];
  const sections = changelogSections([release('1.0.0', 'a', 'First release of /v1.')], () => base, head, accepted);
  const markdown = renderMarkdown(sections, 'Changelog: Fixture API');
  const unreleased = between(markdown, '## Unreleased', '## 1.0.0');

  it('when every break was accepted, then there is no "Breaking changes": additive changes come first, then each accepted break', () => {
    expect(unreleased).not.toContain('### Breaking changes');
    expect(unreleased.indexOf('### Additive changes')).toBeGreaterThan(0);
    expect(unreleased.indexOf('### Additive changes')).toBeLessThan(unreleased.indexOf('### Accepted breaks'));
  });

  it('says of each accepted break why it was accepted and what a client must do, nothing when the decision names nothing', () => {
    const breaks = unreleased.slice(unreleased.indexOf('### Accepted breaks'));

    expect(breaks).toContain('Why it was accepted: Such names were refused already.\n\nWhat a client must do: Nothing.');
    expect(breaks).toContain('Why it was accepted: New IDs carry their time.\n\nWhat a client must do: Accept 24 or 33 characters after `av_`.');
    expect(breaks).toContain('- `id`: ID format documentation changed (was “The avatar ID, `av_` followed by 24 lowercase letters and digits.”; now “The avatar ID, `av_` followed by 33 lowercase letters and digits.”), in `GET /v1/avatars/{id} 200 response`');
  });

  it('shows a pattern as code, as the contract writes it, not escaped', () => {
    expect(unreleased).toContain('(pattern none → `^[^\\u0000]*$`)');
    expect(unreleased).not.toContain('\\^');
  });

  it('in HTML, says the same with the decision\'s code as code', () => {
    const html = renderHtml(sections, 'Changelog: Fixture API');

    expect(html).toContain('<h3>Accepted breaks</h3>');
    expect(html).toContain('<p><strong>What a client must do:</strong> Accept 24 or 33 characters after <code>av_</code>.</p>');
    expect(html).toContain('(pattern none → <code>^[^\\u0000]*$</code>)');
  });
});

describe('renderHtml', () => {
  it('when the text holds markup, then the page shows it as text', () => {
    const hostile = [release('1.0.0', 'a', '<script>alert("x")</script> & friends')];
    const head = fixture();
    head.components.schemas.JobStatus.enum.push('<img src=x onerror=alert(1)>');

    const html = renderHtml(changelogSections(hostile, bundleOf, head), 'Changelog: <Fixture>');

    expect(html).toContain('<title>Changelog: &lt;Fixture&gt;</title>');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; friends');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).not.toMatch(/<script|<img/);
  });

  it('when rendered, then the page needs no network', () => {
    const html = renderHtml(changelogSections(RELEASES, bundleOf, working), 'Changelog: Fixture API');

    expect(html).not.toMatch(/https?:|src=|<link/);
    expect(html).toContain('<h3>Breaking changes</h3>');
  });
});

function between(text: string, from: string, to: string): string {
  return text.slice(text.indexOf(from), text.indexOf(to));
}

describe('notes on the unreleased changes', () => {
  it('when notes are written for what the diff cannot show, then Unreleased carries them, in Markdown and in HTML with code as code', () => {
    const note = '`RateLimit` now follows revision 11 of the draft; nothing changes on the wire.';
    const sections = changelogSections(RELEASES, bundleOf, working, [], [note]);

    expect(sections[0]?.notes).toEqual([note]);
    expect(sections.slice(1).every((section) => section.notes === undefined)).toBe(true);
    expect(renderMarkdown(sections, 'Changelog: Fixture API')).toContain(`## Unreleased\n\nChanges since 1.1.0, not yet released.\n\n- ${note}\n`);
    expect(renderHtml(sections, 'Changelog: Fixture API')).toContain('<li><code>RateLimit</code> now follows revision 11 of the draft; nothing changes on the wire.</li>');
  });

  it('when the notes file is missing, then there are none; when it is not a list of non-empty strings, then it is refused naming the file and the rule', () => {
    const repo = mkdtempSync(join(tmpdir(), 'unreleased-notes-'));
    expect(loadUnreleasedNotes(repo)).toEqual([]);
    mkdirSync(join(repo, 'openapi'));
    for (const bad of ['{"notes": "x"}', '[""]', '[1]', 'not json']) {
      writeFileSync(join(repo, 'openapi', 'unreleased-notes.json'), bad);
      expect(() => loadUnreleasedNotes(repo), bad).toThrow(/^openapi\/unreleased-notes\.json (must be an array of notes, each a non-empty string|is not JSON)/);
    }
    writeFileSync(join(repo, 'openapi', 'unreleased-notes.json'), '["A note."]');
    expect(loadUnreleasedNotes(repo)).toEqual(['A note.']);
  });
});
