// Where the command keeps its payment channels between runs: one JSON file per channel in a directory only its user
// can read (a channel's latest voucher is the payer's signature over what it owes).
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { ChannelStorage } from "@agent-tools/sdk";

/** `AGENT_TOOLS_CHANNEL_DIR`, else `$XDG_STATE_HOME/agent-tools/channels`, else `~/.local/state/agent-tools/channels`. */
export function channelDirectory(env: NodeJS.ProcessEnv): string {
  if (env.AGENT_TOOLS_CHANNEL_DIR) return env.AGENT_TOOLS_CHANNEL_DIR;
  const state = env.XDG_STATE_HOME || join(homedir(), ".local", "state");
  return join(state, "agent-tools", "channels");
}

const CHANNEL_FILE = /^0x[0-9a-f]{64}\.json$/;

/**
 * A {@link ChannelStorage} in `dir`: the directory is made 0700 and each file 0600, written whole (a temporary file
 * renamed over the old one), so a run cut mid-write leaves the channel as it was before.
 */
export function fileChannelStorage(dir: string): ChannelStorage {
  const fileOf = (key: string) => {
    const id = key.toLowerCase();
    if (!/^0x[0-9a-f]{64}$/.test(id)) throw new Error(`not a channel id: ${key}`);
    return join(dir, `${id}.json`);
  };
  const ready = () => {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  };
  return {
    async get(key) {
      try {
        return JSON.parse(readFileSync(fileOf(key), "utf8"));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw error;
      }
    },
    async set(key, context) {
      ready();
      const file = fileOf(key);
      const staging = `${file}.${process.pid}.tmp`;
      writeFileSync(staging, `${JSON.stringify(context)}\n`, { mode: 0o600 });
      renameSync(staging, file);
    },
    async delete(key) {
      rmSync(fileOf(key), { force: true });
    },
    async list() {
      try {
        return readdirSync(dir)
          .filter((name) => CHANNEL_FILE.test(name))
          .map((name) => name.slice(0, -".json".length));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw error;
      }
    },
  };
}
