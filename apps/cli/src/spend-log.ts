// Where the command keeps what its paid calls were charged, for --max-per-day: one JSON line per charge in a file
// only its user can read, one file per paying address, shared by every run (tool commands, --watch, the MCP bridge).
import { appendFileSync, chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import type { SpendLog, SpendRecord } from "@agent-tools/sdk";

/**
 * `AGENT_TOOLS_SPEND_LOG`, else `$XDG_STATE_HOME/agent-tools/spend/<payer>.jsonl` (`~/.local/state` without
 * `XDG_STATE_HOME`): a key's day is its own, whatever other keys (a devnet's public ones, say) paid.
 */
export function spendLogPath(env: NodeJS.ProcessEnv, payer: string): string {
  if (env.AGENT_TOOLS_SPEND_LOG) return env.AGENT_TOOLS_SPEND_LOG;
  const state = env.XDG_STATE_HOME || join(homedir(), ".local", "state");
  return join(state, "agent-tools", "spend", `${payer.toLowerCase()}.jsonl`);
}

/** Past this size the file is written again with the last day's charges only. */
const COMPACT_AT_BYTES = 256 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A {@link SpendLog} in `file`: each charge is appended as one line (an append of a short line is whole even when two
 * runs write at once), the directory made 0700 and the file 0600. A line that does not read as a charge is skipped.
 */
export function fileSpendLog(file: string): SpendLog {
  const read = (): SpendRecord[] => {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    return text.split("\n").flatMap((line) => {
      try {
        const record = JSON.parse(line) as SpendRecord;
        return typeof record.at === "string" && /^\d+$/.test(record.units) ? [record] : [];
      } catch {
        return [];
      }
    });
  };
  return {
    async since(since) {
      return read().filter((record) => Date.parse(record.at) >= since.getTime());
    },
    async add(record) {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      appendFileSync(file, `${JSON.stringify(record)}\n`, { mode: 0o600 });
      chmodSync(file, 0o600);
      if (statSync(file).size < COMPACT_AT_BYTES) return;
      const dayAgo = Date.parse(record.at) - DAY_MS;
      const kept = read().filter((kept) => Date.parse(kept.at) >= dayAgo);
      const staging = `${file}.${process.pid}.tmp`;
      writeFileSync(staging, kept.map((kept) => `${JSON.stringify(kept)}\n`).join(""), { mode: 0o600 });
      renameSync(staging, file);
    },
  };
}
