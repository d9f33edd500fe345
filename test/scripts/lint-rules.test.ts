// The project's own ESLint rules (eslint.config.js), run on code written for them: each refuses what it names and
// leaves the allowed form alone.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/** The messages ESLint gives `code` as if it were a file of src/. */
async function messagesFor(code: string): Promise<string[]> {
  const [result] = await new ESLint().lintText(code, { filePath: 'src/lint-rule-example.ts' });
  return result!.messages.map((message) => message.message);
}

const client = 'declare const db: { $transaction: (...args: unknown[]) => Promise<unknown> };\n';

describe('$transaction (statements of one request are never batched with another’s: src/platform/db/write-witness.ts)', () => {
  it.each([
    ['called with an array', 'void db.$transaction([]);', 'Pass $transaction a function written in place'],
    ['called with a variable', 'const work = async () => 1;\nvoid db.$transaction(work);', 'Pass $transaction a function written in place'],
    ['called as a computed member', "void db['$transaction']([]);", 'Pass $transaction a function written in place'],
    ['taken off the client', 'const { $transaction } = db;\nvoid $transaction([]);', 'Call $transaction on the client itself'],
    ['called through call', 'void db.$transaction.call(db, []);', 'Call $transaction on the client itself'],
    ['called through apply', "void db['$transaction'].apply(db, [[]]);", 'Call $transaction on the client itself'],
  ])('refuses it %s', async (_form, code, message) => {
    expect(await messagesFor(client + code)).toEqual([expect.stringContaining(message)]);
  });

  it('accepts a function written in place', async () => {
    expect(await messagesFor(`${client}void db.$transaction(async () => 1);\nvoid db.$transaction(function work() { return Promise.resolve(1); });`)).toEqual(
      [],
    );
  });
});
