import pg from "pg";
import type { Database, Queryable } from "./database.js";

/** A connection pool to a Postgres server (`DATABASE_URL`). */
export async function openPostgres(url: string, options: { maxConnections?: number } = {}): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: options.maxConnections ?? 10 });
  // Fail at start, with the server's own message, rather than on the first paid call.
  const client = await pool.connect();
  client.release();
  const query: Queryable["query"] = async (sql, params) => (await pool.query(sql, params as unknown[])).rows as never;
  return {
    kind: "postgres",
    location: redactPassword(url),
    pool,
    query,
    async transaction(work) {
      const connection = await pool.connect();
      try {
        await connection.query("BEGIN");
        const result = await work({
          query: async (sql, params) => (await connection.query(sql, params as unknown[])).rows as never,
        });
        await connection.query("COMMIT");
        return result;
      } catch (error) {
        await connection.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        connection.release();
      }
    },
    close: () => pool.end(),
  };
}

function redactPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "postgres";
  }
}
