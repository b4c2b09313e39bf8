// drizzle-kit config for the migration the package ships for Postgres (SPEC S22).
// Regenerate after changing src/postgres/table.ts: `npx drizzle-kit generate`.
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  // Only the default table: migratePostgres renames it for a configured table name.
  schema: './src/postgres/table.ts',
  out: './drizzle/postgres',
});
