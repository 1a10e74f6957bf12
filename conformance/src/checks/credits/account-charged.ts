import { defineCheck, STATEFUL } from '../../check.ts';
import { balances, chargedFor, show } from '../../observe/ledger.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'credits.account-charged',
  title: "Jobs are paid by the key's own account and no other",
  asserts: 'Where /v1/me shows balances: the jobs of the --api-key account lower its own available credits, and the other account\'s used and reserved credits move only by its own jobs; the two keys report different accounts.',
  clauses: ['CR-ACCOUNT', 'AUTH-ACCOUNT'],
  decisions: ['ND-ME'],
  profiles: STATEFUL,
  needs: ['second-key'],
  optionalIn: ['core', 'production'],
  async run(ctx) {
    const jobs = await ctx.world.allSettled();
    const main = balances(ctx, 'main', 'before', 'after');
    const second = balances(ctx, 'second', 'before', 'after');
    const mainCharged = chargedFor(ctx.shape, jobs, 'main');
    if (mainCharged.count > 0 && !(main.after.available < main.before.available)) {
      fail({ clause: 'CR-ACCOUNT', message: `${mainCharged.count} jobs of the --api-key account reached ready, but its balance did not go down`, expected: `available below ${main.before.available}`, received: show(main.after), fix: "Charge each job to the account its key belongs to." });
    }
    const secondCharged = chargedFor(ctx.shape, jobs, 'second');
    const moved = second.after.used - second.before.used;
    if (second.after.reserved !== second.before.reserved || (secondCharged.known && moved !== secondCharged.total)) {
      fail({
        clause: 'CR-ACCOUNT',
        message: "the other account's balance moved while only the --api-key account made jobs",
        expected: `used up by ${secondCharged.total} (its own ready jobs), reserved unchanged`,
        received: `before: ${show(second.before)}; after: ${show(second.after)}`,
        fix: "Charge each job to the account its key belongs to, never to another.",
      });
    }
    const id = (key: 'main' | 'second') => ctx.shape.accountId(ctx.world.snapshots.get(`${key}:before`)?.json);
    if (id('main') !== undefined && id('main') === id('second')) fail({ clause: 'AUTH-ACCOUNT', message: 'both keys report the same account', expected: 'two accounts', received: String(id('main')) });
  },
});
