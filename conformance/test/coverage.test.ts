// The runner's registry stays whole: every clause a black box can observe has a check,
// every reference resolves, and the contract names no clause the runner does not know.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHECKS } from '../src/checks/index.ts';
import { PROXY_CHECKS } from '../src/proxy/index.ts';
import { RECEIVER_CHECKS } from '../src/receiver-checks/index.ts';
import { CLAUSES, DECISIONS } from '../src/clauses.ts';
import { listMatrix } from '../src/report/markdown.ts';

const root = new URL('../../', import.meta.url);

describe('the clause registry', () => {
  it('when a clause is observable as a black box (B), then at least one check proves it', () => {
    const uncovered = CLAUSES.filter((c) => (c.observe as readonly string[]).includes('B')).filter((c) => !CHECKS.some((check) => (check.clauses as readonly string[]).includes(c.id)));
    expect(uncovered.map((c) => c.id)).toEqual([]);
  });

  it('when a clause is for clients only (C), then it names the client test that proves it, and that file exists', () => {
    for (const clause of CLAUSES.filter((c) => !(c.observe as readonly string[]).includes('B'))) {
      expect('provenBy' in clause, clause.id).toBe(true);
      if ('provenBy' in clause) expect(existsSync(new URL(clause.provenBy, root)), clause.provenBy).toBe(true);
    }
  });

  it('when the contract tags an element with x-clauses, then the runner knows every ID', () => {
    const text = readFileSync(new URL('generated/openapi.json', root), 'utf8');
    const named = new Set<string>();
    for (const match of text.matchAll(/"x-clauses":\s*\[([^\]]*)\]/g)) for (const id of match[1]!.matchAll(/"([A-Z0-9-]+)"/g)) named.add(id[1]!);
    const known = new Set<string>(CLAUSES.map((c) => c.id));
    expect([...named].filter((id) => !known.has(id))).toEqual([]);
  });
});

describe('the checks', () => {
  it('when listed, then each has a unique stable ID of the form <area>.<behaviour>', () => {
    const ids = CHECKS.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^(auth|avatars|videos|states|credits|rate-limits|webhooks|versioning|contract|generated|idempotency|lists)\.[a-z0-9-]+$/);
  });

  it('when a check names clauses or decisions, then they exist, and it names at least one', () => {
    const clauses = new Set<string>(CLAUSES.map((c) => c.id));
    const decisions = new Set<string>(DECISIONS.map((d) => d.id));
    for (const check of CHECKS) {
      expect(check.clauses.length + (check.decisions?.length ?? 0), check.id).toBeGreaterThan(0);
      for (const id of check.clauses) expect(clauses.has(id), `${check.id}: ${id}`).toBe(true);
      for (const id of check.decisions ?? []) expect(decisions.has(id), `${check.id}: ${id}`).toBe(true);
      expect(check.title.length, check.id).toBeGreaterThan(10);
      expect(check.profiles.length, check.id).toBeGreaterThan(0);
    }
  });

  it('when a check lives in checks/<area>/<behaviour>.ts, then its ID says the same', () => {
    // The checks of generated inputs live in checks/inputs/ (a folder named generated/ would
    // claim a command made them) and keep the IDs runs have always selected and reported.
    const areaOfFolder: Record<string, string> = { inputs: 'generated' };
    const index = readFileSync(new URL('conformance/src/checks/index.ts', root), 'utf8');
    const registered = [...index.matchAll(/from '\.\/([a-z-]+)\/([a-z0-9-]+)\.ts'/g)];
    expect(registered.length).toBe(CHECKS.length);
    for (const [, folder, behaviour] of registered) {
      expect(CHECKS.map((c) => c.id)).toContain(`${areaOfFolder[folder!] ?? folder}.${behaviour}`);
    }
  });

  it('when an avatar check and a video check judge the same behaviour, then both run the one implementation in checks/twins.ts', () => {
    const checks = new URL('conformance/src/checks/', root);
    const videos = new Set(readdirSync(new URL('videos/', checks)));
    const twins = readdirSync(new URL('avatars/', checks)).filter((file) => videos.has(file));
    expect(twins.length).toBeGreaterThanOrEqual(2);
    for (const file of twins) {
      for (const area of ['avatars', 'videos']) expect(readFileSync(new URL(`${area}/${file}`, checks), 'utf8'), `${area}/${file}`).toMatch(/from '\.\.\/twins\.ts'/);
    }
  });

  it('when a check is registered, then it says in a sentence what holding means, not only its name', () => {
    for (const check of CHECKS) {
      expect(check.asserts.length, check.id).toBeGreaterThan(60);
      expect(check.asserts, check.id).not.toBe(check.title);
    }
  });

  it('when --list prints what the checks assert, then each black-box clause is followed by the assertion of every check that proves it', () => {
    const text = listMatrix(CHECKS);
    for (const clause of CLAUSES.filter((c) => (c.observe as readonly string[]).includes('B'))) {
      const section = text.split(`## ${clause.id} `)[1]?.split('\n## ')[0] ?? '';
      for (const check of CHECKS.filter((c) => (c.clauses as readonly string[]).includes(clause.id))) expect(section, clause.id).toContain(`\`${check.id}\`: ${check.asserts}`);
    }
  });

  it('when --list prints the matrix, then every clause and every check appears', () => {
    const text = listMatrix(CHECKS);
    for (const clause of CLAUSES) expect(text).toContain(`| ${clause.id} |`);
    for (const check of CHECKS) expect(text).toContain(check.id);
  });
});

describe('the receiver checks', () => {
  it('when a clause is judged in a receiver run (R), then a receiver check proves it, and every receiver check names only such clauses', () => {
    const receiverClauses = CLAUSES.filter((c) => (c.observe as readonly string[]).includes('R')).map((c) => c.id);
    expect(receiverClauses).toEqual(expect.arrayContaining(['WH-RECEIVER-VERIFY', 'WH-DUPLICATES', 'WH-ORDER']));
    for (const id of receiverClauses) expect(RECEIVER_CHECKS.some((check) => (check.clauses as readonly string[]).includes(id)), id).toBe(true);
    // The signature scheme itself is also named: a receiver proves it by what it refuses.
    const named = new Set<string>([...receiverClauses, 'WH-SIGNATURE']);
    for (const check of RECEIVER_CHECKS) for (const id of check.clauses) expect(named.has(id), `${check.id}: ${id}`).toBe(true);
  });

  it('when listed, then each has a unique ID receiver.<behaviour>, in the file of that name, and says what holding means', () => {
    const ids = RECEIVER_CHECKS.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    const index = readFileSync(new URL('conformance/src/receiver-checks/index.ts', root), 'utf8');
    const files = [...index.matchAll(/from '\.\/checks\/([a-z0-9-]+)\.ts'/g)].map((match) => `receiver.${match[1]}`);
    expect(files.sort()).toEqual([...ids].sort());
    for (const check of RECEIVER_CHECKS) {
      expect(check.asserts.length, check.id).toBeGreaterThan(60);
      expect(check.deliveries, check.id).toBeGreaterThan(0);
    }
  });

  it('when --list prints the clauses, then each receiver clause is followed by what its receiver checks assert', () => {
    const text = listMatrix(CHECKS);
    for (const check of RECEIVER_CHECKS) {
      for (const id of check.clauses) {
        const section = text.split(`## ${id} `)[1]?.split('\n## ')[0] ?? '';
        expect(section, id).toContain(`\`${check.id}\`: ${check.asserts}`);
      }
    }
  });
});

describe('the proxy checks', () => {
  it('when a clause binds clients and the proxy can see it (P), then a client check proves it, and every client check names only such clauses', () => {
    const clientClauses = CLAUSES.filter((c) => (c.observe as readonly string[]).includes('P')).map((c) => c.id);
    expect(clientClauses).toEqual(expect.arrayContaining(['RL-CLIENT-WAIT', 'RL-CLIENT-BACKOFF', 'AV-READY-BEFORE-VIDEO']));
    const clientChecks = PROXY_CHECKS.filter((check) => check.party === 'client');
    for (const id of clientClauses) expect(clientChecks.some((check) => (check.clauses as readonly string[]).includes(id)), id).toBe(true);
    for (const check of clientChecks) for (const id of check.clauses) expect(clientClauses, `${check.id}: ${id}`).toContain(id);
  });

  it('when a clause is for clients only (C), then the proxy judges it too, or it is a receiver\'s', () => {
    for (const clause of CLAUSES.filter((c) => (c.observe as readonly string[]).includes('C'))) {
      expect((clause.observe as readonly string[]).some((o) => o === 'P' || o === 'R'), clause.id).toBe(true);
    }
  });

  it('when a service check of the proxy names a clause, then a service run proves that clause too (the proxy repeats its rules passively)', () => {
    for (const check of PROXY_CHECKS.filter((c) => c.party === 'service')) {
      for (const id of check.clauses) expect(CHECKS.some((c) => (c.clauses as readonly string[]).includes(id)), `${check.id}: ${id}`).toBe(true);
    }
  });

  it('when listed, then each has a unique ID <party>.<behaviour> in the file of that name, and says what holding means', () => {
    const ids = PROXY_CHECKS.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    const index = readFileSync(new URL('conformance/src/proxy/index.ts', root), 'utf8');
    const files = [...index.matchAll(/from '\.\/checks\/(client|service)-([a-z0-9-]+)\.ts'/g)].map((match) => `${match[1]}.${match[2]}`);
    expect(files.sort()).toEqual([...ids].sort());
    for (const check of PROXY_CHECKS) {
      expect(check.id.startsWith(`${check.party}.`), check.id).toBe(true);
      expect(check.asserts.length, check.id).toBeGreaterThan(60);
    }
  });

  it('when the source pairs a status with a code (402 insufficient_credits, 429 rate_limit_exceeded) or forbids a job on a 402, then a service check of the proxy judges it passively', () => {
    const judged = PROXY_CHECKS.filter((check) => check.party === 'service').flatMap((check) => check.clauses as readonly string[]);
    expect(judged).toEqual(expect.arrayContaining(['CR-402', 'CR-402-NO-JOB', 'RL-429']));
  });

  it('when a proxy check is registered, then the guide to checking a client (docs/receivers-and-clients.md) has its row with its clauses', () => {
    const guide = readFileSync(new URL('docs/receivers-and-clients.md', root), 'utf8');
    for (const check of PROXY_CHECKS) expect(guide, check.id).toContain(`| \`${check.id}\` | ${check.clauses.join(', ')} |`);
  });

  it('when --list prints the clauses, then each client clause is followed by what its proxy checks assert', () => {
    const text = listMatrix(CHECKS);
    for (const check of PROXY_CHECKS.filter((c) => c.party === 'client')) {
      for (const id of check.clauses) {
        const section = text.split(`## ${id} `)[1]?.split('\n## ')[0] ?? '';
        expect(section, id).toContain(`\`${check.id}\`: ${check.asserts}`);
      }
    }
    expect(text).toContain('| RL-CLIENT-WAIT | C, P | (client: client/test/client.test.ts); proxy mode: client.waits-retry-after |');
  });
});
