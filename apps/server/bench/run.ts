/**
 * `pnpm bench`: starts the servers in a child process (bench/host.ts: fresh devnet, our app, a bare Express app,
 * the reference @x402/express app, all on 127.0.0.1 with ephemeral ports), loads them from this process with
 * autocannon (10 connections; the two sides of each comparison in alternating rounds) and prints one table. It
 * prints; it asserts nothing.
 *
 *   --only=healthz,challenge,paid,market   run some lines only
 *   --cpu-prof[=dir]                write a CPU profile of the servers' process (default: a temporary directory)
 */
import { type ChildProcess, fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { benchChallenge } from "./challenge.js";
import { benchHealthz } from "./healthz.js";
import { benchMarket, type MarketLine, printMarket } from "./market.js";
import { benchPaid } from "./paid.js";
import { createSigners, HOLDER_BODY, HOLDER_INDEX, INTEL_BODY } from "./payments.js";
import type { FromHost, HostCpu, HostInfo, HostReport } from "./protocol.js";
import { printTable, type Row } from "./table.js";

const args = process.argv.slice(2);
const only = args
  .find((a) => a.startsWith("--only="))
  ?.slice(7)
  .split(",");
const wants = (line: string) => !only || only.includes(line);
const cpuProf = args.find((a) => a.startsWith("--cpu-prof"));
const profileDir = cpuProf?.includes("=")
  ? cpuProf.slice(cpuProf.indexOf("=") + 1)
  : join(tmpdir(), "agent-tools-bench-profiles");

const progress = (line: string) => process.stderr.write(`bench: ${line}\n`);

/** CPU time (µs) all processes of the machine have used so far (Linux /proc/stat), or undefined elsewhere. */
function machineBusyMicros(): number | undefined {
  try {
    // user, nice, system, idle, iowait, irq, softirq, steal: processes' time and what other VMs took (steal);
    // interrupt time (the loopback traffic itself) is left out.
    const [user = 0, nice = 0, system = 0, , , , , steal = 0] = readFileSync("/proc/stat", "utf8")
      .split("\n")[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return ((user + nice + system + steal) * 1_000_000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

const ownCpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

function nextMessage(child: ChildProcess): Promise<FromHost> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`the servers' process exited (${code}) early`));
    child.once("exit", onExit);
    child.once("message", (message: FromHost) => {
      child.off("exit", onExit);
      if (message.type === "failed") reject(new Error(`the servers' process failed: ${message.message}`));
      else resolve(message);
    });
  });
}

async function main(): Promise<void> {
  const started = performance.now();
  const machineBefore = machineBusyMicros();
  const ownBefore = ownCpuMicros();
  let hostCpu = 0;
  progress("starting the devnet and the servers");
  const child = fork(fileURLToPath(new URL("./host.ts", import.meta.url)), [], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    execArgv: [...process.execArgv, ...(cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [])],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const serverCpu = async () => {
    child.send({ type: "cpu" });
    hostCpu = ((await nextMessage(child)) as HostCpu).micros;
    return hostCpu;
  };
  let report: HostReport | undefined;
  const rows: Row[] = [];
  const breakdowns: { label: string; serverTimings: string[] }[] = [];
  try {
    const host = (await nextMessage(child)) as HostInfo;
    progress(`devnet seeded in ${(host.seedMs / 1000).toFixed(1)} s`);

    if (wants("healthz")) {
      progress("GET /healthz");
      const { bare, ours } = await benchHealthz(host, serverCpu);
      rows.push(
        { line: "GET /healthz", app: "bare Express 5", result: bare, anchor: "~11k" },
        { line: "GET /healthz", app: "ours", result: ours, versus: bare },
      );
    }
    if (wants("challenge")) {
      progress("402 challenge");
      const { reference, ours } = await benchChallenge(host, serverCpu);
      rows.push(
        { line: "402 POST /intel", app: "@x402/express", result: reference, anchor: "~7.1k" },
        { line: "402 POST /intel", app: "ours", result: ours, versus: reference },
      );
    }
    if (wants("paid")) {
      const signers = createSigners(host);
      progress("paid POST /intel: reference, ours (anonymous), ours (signed-in holder)");
      const { reference, ours, holder } = await benchPaid({
        reference: { url: `${host.urls.reference}/intel`, body: INTEL_BODY, signers, serverCpu },
        ours: { url: `${host.urls.ours}/intel`, body: INTEL_BODY, signers, serverCpu },
        holder: {
          url: `${host.urls.ours}/intel`,
          body: HOLDER_BODY,
          signers,
          signIn: { index: HOLDER_INDEX, path: "/intel" },
          serverCpu,
        },
      });
      rows.push(
        {
          line: "paid POST /intel",
          app: "@x402/express",
          result: reference.result,
          anchor: "~200",
          failures: reference.failures,
        },
        {
          line: "paid POST /intel",
          app: "ours, anonymous",
          result: ours.result,
          versus: reference.result,
          failures: ours.failures,
        },
        {
          line: "paid POST /intel",
          app: "ours, signed-in holder",
          result: holder.result,
          versus: reference.result,
          failures: holder.failures,
        },
      );
      breakdowns.push(
        { label: "ours, anonymous", serverTimings: ours.serverTimings },
        { label: "ours, signed-in holder", serverTimings: holder.serverTimings },
      );
      const runs = [reference, ours, holder];
      progress(
        `payments signed in ${runs.map((r) => r.signSeconds.toFixed(1)).join(" / ")} s; oldest payment ` +
          `${Math.max(...runs.map((r) => r.oldestPaymentAgeSeconds)).toFixed(1)} s old at the end of its round ` +
          `(valid for ${host.maxTimeoutSeconds} s)`,
      );
    }
  } finally {
    if (child.connected) {
      await serverCpu().catch(() => undefined);
      child.send({ type: "close" });
      report = (await nextMessage(child).catch(() => undefined)) as HostReport | undefined;
    }
    // The servers' process exits once everything in it is closed; one that does not is stopped and reported.
    const stuck = setTimeout(() => {
      progress("the servers' process did not exit within 15 s of closing; stopping it");
      child.kill("SIGKILL");
    }, 15_000);
    const code = await exited;
    clearTimeout(stuck);
    if (code !== 0) process.exitCode = 1;
  }

  let market: MarketLine[] = [];
  if (wants("market")) {
    progress("market tools: drop radar at 150 ms upstream latency, B20 radar over 604,800 blocks");
    market = await benchMarket(progress);
  }

  const seconds = (performance.now() - started) / 1000;
  const machineAfter = machineBusyMicros();
  // What the rest of the machine used meanwhile: all its CPU time minus this process's and the servers'.
  const othersShare =
    machineBefore === undefined || machineAfter === undefined
      ? undefined
      : Math.max(0, machineAfter - machineBefore - (ownCpuMicros() - ownBefore) - hostCpu) /
        (seconds * 1_000_000 * cpus().length);
  printTable(rows, breakdowns, {
    environment: `Node ${process.version}, ${cpus().length} CPUs, 127.0.0.1, autocannon 8, 10 connections`,
    chain: report,
    seconds,
    ...(othersShare === undefined ? {} : { othersShare }),
    ...(cpuProf ? { profileDir } : {}),
  });
  if (market.length > 0) printMarket(market);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
