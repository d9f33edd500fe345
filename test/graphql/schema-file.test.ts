import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { printedSchema } from '../../src/api/print.ts';

it('schema.graphql is the schema the code builds (run `npm run generate:schema` after changing types)', () => {
  const checkedIn = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');
  expect(checkedIn).toBe(printedSchema());
});
