import { defineCheck, fail, STATEFUL } from '../../check.ts';
import { describe, expectProblem, mentions } from '../../expect.ts';
import { isJson } from '../../world.ts';

export default defineCheck({
  id: 'credits.insufficient-credits-402',
  title: 'A generation request without enough credits gets 402 insufficient_credits',
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
    } else if (!mentions(exchange, 'insufficient_credits')) {
      fail({ clause: 'CR-402', message: 'the 402 does not carry the code insufficient_credits', expected: 'insufficient_credits in the body', received: exchange.bodyText.slice(0, 200), fix, exchanges: [exchange] });
    }
  },
});
