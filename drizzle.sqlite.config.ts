/**
 * drizzle-kit config for the migrations the package ships for SQLite (SPEC S22).
 * Regenerate after changing src/sqlite/table.ts:
 *   npx drizzle-kit generate --config drizzle.sqlite.config.ts
 */
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'sqlite',
  // table.ts only imports drizzle-orm, so drizzle-kit can load it without our .js specifiers.
  schema: './src/sqlite/table.ts',
  out: './drizzle/sqlite',
});
