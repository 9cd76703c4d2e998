import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The `XDG_STATE_HOME` the command runs with in a test file: a directory of its own, so that what the command keeps
 * between runs (each key's spend log, its channels) starts empty with every test run and never reaches the user's home.
 */
export const stateHome = mkdtempSync(join(tmpdir(), "agent-tools-state-"));
