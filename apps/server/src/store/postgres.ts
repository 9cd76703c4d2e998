import { once } from "node:events";
import type { Readable } from "node:stream";
import pg from "pg";
import { to as copyTo } from "pg-copy-streams";
import type { Database, Queryable } from "./database.js";

/** A connection pool to a Postgres server (`DATABASE_URL`). */
export async function openPostgres(url: string, options: { maxConnections?: number } = {}): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: options.maxConnections ?? 10 });
  // The pool's end resolves before its connections have closed: `close` also waits for each to end, so that nothing
  // is still connected when the caller goes on (to stop the server, or to exit).
  const connected = new Set<pg.Client>();
  pool.on("connect", (client) => {
    connected.add(client);
    client.once("end", () => connected.delete(client));
  });
  // Fail at start, with the server's own message, rather than on the first paid call.
  const client = await pool.connect();
  client.release();
  const on = (target: pg.Pool | pg.PoolClient): Queryable => ({
    query: async (sql, params) => (await target.query(sql, params as unknown[])).rows as never,
    queryArrays: async (sql, params) =>
      (await target.query({ text: sql, values: params as unknown[], rowMode: "array" })).rows as never,
  });
  return {
    kind: "postgres",
    location: postgresLocation(url),
    pool,
    ...on(pool),
    async transaction(work) {
      const connection = await pool.connect();
      try {
        await connection.query("BEGIN");
        const result = await work(on(connection));
        await connection.query("COMMIT");
        return result;
      } catch (error) {
        await connection.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        connection.release();
      }
    },
    async copyOut(statement, settings = []) {
      const connection = await pool.connect();
      try {
        await connection.query("BEGIN READ ONLY");
        for (const setting of settings) await connection.query(setting);
      } catch (error) {
        connection.release(error as Error);
        throw error;
      }
      const bytes: Readable = connection.query(copyTo(statement));
      let released = false;
      // Given back to the pool once the statement ran to its end. Otherwise released with an error: the pool ends the
      // client, pg closes the socket of a query still running, and Postgres stops the statement on its next write.
      const release = (error?: Error) => {
        if (released) return;
        released = true;
        connection.release(error);
      };
      bytes.once("end", () => {
        connection.query("COMMIT").then(
          () => release(),
          (error: Error) => release(error),
        );
      });
      bytes.on("error", (error) => release(error));
      bytes.once("close", () => {
        if (!bytes.readableEnded) release(new Error("the COPY's reader went away"));
      });
      return bytes;
    },
    async close() {
      const ended = [...connected].map((client) => once(client, "end"));
      await pool.end();
      await Promise.all(ended);
    },
  };
}

/** The server's host, port and database of a connection URL: no user, password or parameters. */
export function postgresLocation(url: string): string {
  try {
    // A URL with no host (`postgres://user@/db?host=/run/postgresql`) is one the WHATWG parser refuses.
    const parsed = new URL(url.replace(/^(postgres(?:ql)?:\/\/(?:[^@/]*@)?)\//, "$1localhost/"));
    // A Unix socket is named by a `host` parameter (a directory), not by the URL's host.
    const host = parsed.searchParams.get("host") || parsed.host;
    return `${host}${parsed.pathname.length > 1 ? parsed.pathname : ""}`;
  } catch {
    return "the server of DATABASE_URL";
  }
}
