import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { TestProject } from "vitest/node";
import { migrate } from "../src/store/migrations.js";
import { fromPglite } from "../src/store/pglite.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** A dump of a migrated, empty PGlite data directory: a test database starts from it in under a second. */
    pgliteTemplate: string;
  }
}

/** Creating a PGlite cluster takes seconds; it is done once per run and copied by each test that needs one. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), "agent-tools-pglite-"));
  const pglite = await PGlite.create();
  await migrate(fromPglite(pglite));
  const dump = await pglite.dumpDataDir("none");
  await pglite.close();
  const path = join(dir, "template.tar");
  await writeFile(path, Buffer.from(await dump.arrayBuffer()));
  project.provide("pgliteTemplate", path);
  return () => rm(dir, { recursive: true, force: true });
}
