// Prisma CLI configuration. Only `prisma generate` is used here: migrations are plain SQL files applied by
// `npm run db:migrate` (src/platform/db/migrate.ts), because the CLI's native schema engine cannot be downloaded offline.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  // env('DATABASE_URL') would throw when unset, even for `generate`, which needs no database.
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/payments' },
});
