// The items asked for together go to PostgreSQL as one statement; an item PostgreSQL
// refuses fails alone, never the items asked beside it, while a database that is not
// there fails the whole group at once.
import { describe, expect, it } from 'vitest';
import { createStatementGroup } from '../../src/storage/postgres-redis/statementGroup.ts';

/** An error as node-postgres gives PostgreSQL's: its SQLSTATE in `code`. */
const sqlError = (code: string, message: string) => Object.assign(new Error(message), { code });

/** A statement that doubles each number, refused whenever it holds `refused`, with the groups it was sent. */
function doubling(refused: number, error: Error = sqlError('23505', 'duplicate key value violates unique constraint')) {
  const sent: number[][] = [];
  const send = async (items: number[]) => {
    sent.push(items);
    if (items.includes(refused)) throw error;
    return items.map((n) => n * 2);
  };
  return { sent, group: createStatementGroup(send, { inFlight: 1, max: 10 }) };
}

describe('a statement group', () => {
  it('sends the items asked together as one statement, answering each its own outcome', async () => {
    const { sent, group } = doubling(-1);

    const outcomes = await Promise.all([1, 2, 3].map((n) => group.ask(n)));

    expect(outcomes).toEqual([2, 4, 6]);
    expect(sent).toEqual([[1, 2, 3]]);
  });

  it('sends a group PostgreSQL refused again one item at a time: only the item it cannot take fails', async () => {
    const { sent, group } = doubling(2);

    const outcomes = await Promise.allSettled([1, 2, 3].map((n) => group.ask(n)));

    expect(outcomes).toEqual([
      { status: 'fulfilled', value: 2 },
      { status: 'rejected', reason: expect.objectContaining({ code: '23505' }) },
      { status: 'fulfilled', value: 6 },
    ]);
    expect(sent).toEqual([[1, 2, 3], [1], [2], [3]]);
  });

  it.each([
    ['PostgreSQL unavailable', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a connection that failed', sqlError('08006', 'connection failure')],
    ['a statement out of time', sqlError('57014', 'canceling statement due to statement timeout')],
    ['an error of the service, not of PostgreSQL', new Error('a grouped statement answered 2 outcomes for 3 items')],
  ])('fails every item of the group at once for %s', async (_what, error) => {
    const { sent, group } = doubling(2, error);

    const outcomes = await Promise.allSettled([1, 2, 3].map((n) => group.ask(n)));

    expect(outcomes.every((o) => o.status === 'rejected' && o.reason === error)).toBe(true);
    expect(sent).toEqual([[1, 2, 3]]);
  });

  it('answers a lone item PostgreSQL refused with its error, sent once', async () => {
    const { sent, group } = doubling(7);

    await expect(group.ask(7)).rejects.toMatchObject({ code: '23505' });
    expect(sent).toEqual([[7]]);
  });
});
