/**
 * The bench's processes, each started the way a user starts it: our server as `node apps/server/dist/main.js`
 * (chains over JSON-RPC, PGlite on disk, info-level logs to a file), the reference side in a process of its own,
 * and the CPU time each of them uses, read from /proc.
 */
import { type ChildProcess, fork, spawn } from "node:child_process";
import { createWriteStream, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { FromReferenceHost, ToReferenceHost } from "./reference-host.js";

/** CPU time (user + system, all threads) process `pid` has used so far, in microseconds (Linux /proc). */
export function processCpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at field 3; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1_000_000) / 100; // USER_HZ is 100 on Linux
}

export interface OurServer {
  url: string;
  pid: number;
  logFile: string;
  stop(): Promise<void>;
}

/** `node apps/server/dist/main.js` with `env` on a port the OS picks; its output goes to `logFile`. */
export function startOurServer(env: Record<string, string>, logFile: string): Promise<OurServer> {
  const main = fileURLToPath(new URL("../dist/main.js", import.meta.url));
  // --cpu-prof[=dir] of the bench: a CPU profile of our server, written when it stops.
  const profile = process.argv.find((a) => a.startsWith("--cpu-prof"));
  const profileArgs = profile ? ["--cpu-prof", `--cpu-prof-dir=${profile.split("=")[1] ?? "bench-profiles"}`] : [];
  const child = spawn(process.execPath, [...profileArgs, main], {
    env: { PATH: process.env.PATH ?? "", PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const log = createWriteStream(logFile);
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  process.once("exit", () => child.kill("SIGKILL"));
  return new Promise((resolve, reject) => {
    let seen = "";
    const onData = (chunk: Buffer) => {
      seen += chunk;
      const url = /Agent Tools API on (http:\/\/\S+)/.exec(seen)?.[1];
      if (!url) return;
      child.stdout.off("data", onData);
      child.off("exit", onExit);
      resolve({
        url,
        pid: child.pid!,
        logFile,
        stop: () =>
          new Promise<void>((done) => {
            child.once("exit", () => done());
            child.kill("SIGTERM");
          }),
      });
    };
    const onExit = (code: number | null) => reject(new Error(`our server exited (${code}) before serving:\n${seen}`));
    child.stdout.on("data", onData);
    child.stderr.on("data", (chunk: Buffer) => {
      seen += chunk;
    });
    child.once("exit", onExit);
  });
}

export interface ReferenceHost {
  pid: number;
  ask(message: ToReferenceHost): Promise<FromReferenceHost>;
  close(): Promise<void>;
}

/** The reference side's process (bench/reference-host.ts). */
export function startReferenceHost(): ReferenceHost {
  const child: ChildProcess = fork(fileURLToPath(new URL("./reference-host.ts", import.meta.url)), [], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    execArgv: process.execArgv,
  });
  process.once("exit", () => child.kill("SIGKILL"));
  return {
    pid: child.pid!,
    ask(message) {
      return new Promise((resolve, reject) => {
        const onExit = (code: number | null) => reject(new Error(`the reference process exited (${code})`));
        child.once("exit", onExit);
        child.once("message", (answer: FromReferenceHost) => {
          child.off("exit", onExit);
          if (answer.type === "failed") reject(new Error(`the reference process failed: ${answer.message}`));
          else resolve(answer);
        });
        child.send(message);
      });
    },
    close() {
      return new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.send({ type: "close" } satisfies ToReferenceHost);
      });
    },
  };
}
