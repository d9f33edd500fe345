// `npm run db:migrate`: creates the database if needed and applies pending migrations.
import { loadConfig } from '../platform/config.ts';
import { migrate } from '../platform/db/migrate.ts';
import { ensureDatabase } from '../platform/db/reachability.ts';
import { run } from './run.ts';

run('migrate', async () => {
  const config = loadConfig();
  await ensureDatabase(config.DATABASE_URL);
  const applied = await migrate(config.DATABASE_URL);
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
});
