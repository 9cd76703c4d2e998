import { type SharedEmbeddedService, startSharedEmbeddedService } from "@agent-tools/server/embedded-process";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The embedded default this run's test files share (attachEmbeddedService). */
    embeddedService: SharedEmbeddedService;
  }
}

/**
 * One start of the embedded default for every test file (docs/architecture.md, "What a test run costs"), with
 * info-level logs: tests wait for the service to say it ran a mission.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const service = await startSharedEmbeddedService({ env: { LOG_LEVEL: "info" } });
  project.provide("embeddedService", service.shared);
  return () => service.close();
}
