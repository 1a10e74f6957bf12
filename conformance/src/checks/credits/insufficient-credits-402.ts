import { defineCheck, STATEFUL } from '../../check.ts';
import { describe, expectProblem, where } from '../../expect.ts';
import { isJson } from '../../world.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'credits.insufficient-credits-402',
  title: 'A generation request without enough credits gets 402 insufficient_credits',
  asserts: 'A valid avatar request from an account without enough credits is answered 402 with the code insufficient_credits where the implementation\'s errors carry their code.',
  clauses: ['CR-402'],
  decisions: ['ND-ERROR-BODY'],
  profiles: STATEFUL,
  needs: ['empty-key'],
  async run(ctx) {
    const exchange = await ctx.world.insufficientAttempt();
    const fix = 'Check the account\'s available credits before accepting; answer 402 with code insufficient_credits.';
    if (exchange.status !== 402) {
      fail({ clause: 'CR-402', message: 'a valid avatar request from an account without credits was not answered 402', expected: '402 insufficient_credits', received: describe(exchange), fix, exchanges: [exchange] });
    }
    if (ctx.contract) {
      expectProblem(exchange, 402, 'insufficient_credits', 'CR-402', 'a request without credits');
      const body = isJson(exchange.json) ? exchange.json : {};
      if (typeof body.credits_required !== 'number' || typeof body.credits_available !== 'number') {
        fail({ clause: 'ND-ERROR-BODY', message: 'the 402 does not say how many credits were needed and available', expected: 'credits_required and credits_available (integers)', received: exchange.bodyText.slice(0, 200), fix: 'Add credits_required and credits_available to insufficient_credits problems.', exchanges: [exchange] });
      }
    } else if (!ctx.shape.carries(exchange, 'insufficient_credits')) {
      fail({ clause: 'CR-402', message: 'the 402 does not carry the code insufficient_credits', expected: where(ctx, 'insufficient_credits'), received: exchange.bodyText.slice(0, 200), fix, exchanges: [exchange] });
    }
  },
});
