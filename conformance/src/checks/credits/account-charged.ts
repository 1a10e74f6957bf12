import { defineCheck, STATEFUL } from '../../check.ts';
import { balances, chargedAt, chargedFor, show } from '../../observe/ledger.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'credits.account-charged',
  title: "Jobs are paid by the key's own account and no other",
  asserts: 'Where /v1/me shows balances: the jobs of the --api-key account lower its own available credits (or raise its used ones, where available is not shown), and the other account\'s balance moves only by its own jobs (each of available, reserved and used judged where shown); the two keys report different accounts.',
  clauses: ['CR-ACCOUNT', 'AUTH-ACCOUNT'],
  decisions: ['ND-ME'],
  profiles: STATEFUL,
  needs: ['second-key'],
  // A source clause, judged wherever /v1/me shows a balance (not applicable where the
  // profile says it shows none); the source does not say /v1/me shows one.
  notRequiredIn: ['core', 'production'],
  async run(ctx) {
    const jobs = await ctx.world.allSettled();
    const main = balances(ctx, 'main', 'before', 'after');
    const second = balances(ctx, 'second', 'before', 'after');
    const mainCharged = chargedFor(ctx.shape, jobs, 'main');
    // A charge lowers available and raises used: either shows it.
    const mainPaid = main.after.available !== undefined && main.before.available !== undefined ? main.after.available < main.before.available : main.after.used !== undefined && main.before.used !== undefined ? main.after.used > main.before.used : undefined;
    if (mainCharged.count > 0 && mainPaid === false) {
      const expected = main.before.available !== undefined ? `available below ${main.before.available}` : `used above ${main.before.used}`;
      fail({ clause: 'CR-ACCOUNT', message: `${mainCharged.count} jobs of the --api-key account reached ready, but its balance did not show a charge`, expected, received: show(main.after), fix: "Charge each job to the account its key belongs to." });
    }
    const snapshot = ctx.world.snapshots.get('second:after')!;
    const { settled, unsettled } = chargedAt(ctx.shape, jobs, 'second', snapshot);
    const { before, after } = second;
    const change = (member: 'available' | 'reserved' | 'used') => (after[member] !== undefined && before[member] !== undefined ? after[member] - before[member] : undefined);
    // With every job settled, nothing is held and only the account's own ready jobs were
    // charged. A job of its own still under way when the balance was read (a request some
    // check expected refused and the service accepted) may show as held, charged or
    // released: each member may then be off by up to its cost.
    const range = (least: number | undefined): [number, number] | undefined => (least === undefined || unsettled === undefined ? undefined : [least, least + unsettled]);
    const outside = (value: number | undefined, bounds: [number, number] | undefined) => value !== undefined && bounds !== undefined && (value < bounds[0] || value > bounds[1]);
    const spent = change('available');
    const wrong = outside(change('reserved'), range(0)) || outside(change('used'), range(settled)) || outside(spent === undefined ? undefined : -spent, range(settled));
    if (wrong) {
      fail({
        clause: 'CR-ACCOUNT',
        message: "the other account's balance moved while only the --api-key account made jobs",
        expected: `only its own ready jobs charged (${settled ?? 'their price in'} credits${unsettled ? `, and up to ${unsettled} more held or charged for its jobs under way` : ''}), nothing else held`,
        received: `before: ${show(before)}; after: ${show(after)}`,
        fix: "Charge each job to the account its key belongs to, never to another.",
        exchanges: [snapshot],
      });
    }
    const id = (key: 'main' | 'second') => ctx.shape.accountId(ctx.world.snapshots.get(`${key}:before`)?.json);
    if (id('main') !== undefined && id('main') === id('second')) fail({ clause: 'AUTH-ACCOUNT', message: 'both keys report the same account', expected: 'two accounts', received: String(id('main')) });
  },
});
