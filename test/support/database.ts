// A database of a test's own (migrated like the run's), for a test whose workers must see no other test's
// events: a worker's reconciler takes every due event of its database.
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { createScratchDatabase, type ScratchDatabase } from '../../src/platform/db/scratch-database.ts';

export function ownDatabase(): Promise<ScratchDatabase> {
  const runDatabase = inject('databaseUrl');
  return createScratchDatabase(runDatabase, `${new URL(runDatabase).pathname.slice(1)}_${randomBytes(3).toString('hex')}`);
}
