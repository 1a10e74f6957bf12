import { defineCheck, STATEFUL } from '../../check.ts';
import type { Exchange, KeyName } from '../../http.ts';
import { at, type JobKind } from '../../implementation/profile.ts';
import { describe } from '../../expect.ts';
import { fail, notApplicable } from '../../outcome.ts';

/** Small pages, so that even a run's handful of records spans several. */
const PAGE = 2;
/** Enough for any run's records at PAGE a page; a list that never ends is a failure. */
const MAX_PAGES = 200;

export default defineCheck({
  id: 'lists.each-record-once',
  title: 'Lists page through the account’s own records, each exactly once',
  asserts:
    "Where the implementation profile names lists: GET /v1/avatars and GET /v1/avatar-videos, paged two records at a time by following each page's cursor, show every avatar and video the run made with the main key exactly once, and none of another account's.",
  clauses: ['AUTH-ACCOUNT'],
  decisions: ['ND-LISTS'],
  profiles: STATEFUL,
  // The source has no lists: an implementation without them is not wrong.
  notRequiredIn: ['core', 'production'],
  // After the run's jobs and the credit checks, on the main key (it needs no clock).
  phase: 'clock',
  async run(ctx) {
    const lists = ctx.shape.profile.lists;
    if (!lists) notApplicable('the implementation profile names no lists (lists)');
    const jobs = await ctx.world.allSettled();
    const made = (key: KeyName, kind: JobKind) => jobs.filter((job) => job.key === key && job.kind === kind && job.id !== undefined).map((job) => job.id!);

    for (const [kind, path] of [['avatar', '/v1/avatars'], ['avatar_video', '/v1/avatar-videos']] as const) {
      const seen: string[] = [];
      const exchanges: Exchange[] = [];
      let cursor: string | undefined;
      for (let pages = 0; ; pages++) {
        const query = `${lists.limit}=${PAGE}${cursor === undefined ? '' : `&${lists.cursor}=${encodeURIComponent(cursor)}`}`;
        const page = await ctx.http.send({ key: 'main', method: 'GET', path: `${path}?${query}`, note: `list page ${pages + 1}` });
        exchanges.push(page);
        const data = at(page.json, lists.data);
        if (page.status !== 200 || !Array.isArray(data)) {
          fail({ clause: 'ND-LISTS', message: `GET ${path}?${query} answered ${describe(page)}`, expected: `200 with the records at ${lists.data}`, received: describe(page), fix: 'List the account’s records a page at a time.', exchanges: [page] });
        }
        for (const record of data) seen.push(String(ctx.shape.recordId(record) ?? ''));
        const next = at(page.json, lists.next);
        if (typeof next !== 'string' || next === '') break;
        if (pages >= MAX_PAGES) fail({ clause: 'ND-LISTS', message: `GET ${path} still had a next page after ${MAX_PAGES} pages of ${PAGE}`, expected: 'a last page', received: `${seen.length} records so far`, fix: 'End the list: no cursor on its last page.', exchanges: exchanges.slice(-2) });
        cursor = next;
      }
      const twice = [...new Set(seen.filter((id, i) => seen.indexOf(id) !== i))];
      const missing = made('main', kind).filter((id) => !seen.includes(id));
      const foreign = [...made('second', kind), ...made('empty', kind)].filter((id) => seen.includes(id));
      if (twice.length > 0 || missing.length > 0 || foreign.length > 0) {
        fail({
          clause: foreign.length > 0 ? 'AUTH-ACCOUNT' : 'ND-LISTS',
          message: `paging GET ${path} by ${PAGE} showed ${[twice.length ? `${twice.join(', ')} twice` : '', missing.length ? `not ${missing.join(', ')}` : '', foreign.length ? `another account's ${foreign.join(', ')}` : ''].filter(Boolean).join('; ')}`,
          expected: `each of the ${made('main', kind).length} records the run made with the main key once, and no other account's`,
          received: `${seen.length} records over ${exchanges.length} pages`,
          fix: 'Start each page right after the record its cursor names, in one fixed order (time, then ID), and list the account’s own records only.',
          exchanges: exchanges.slice(0, 3),
        });
      }
    }
  },
});
