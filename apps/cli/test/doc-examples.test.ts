/**
 * Every example of README.md, docs/api.md, packages/sdk/README.md and the CLI's --help, run as written against the
 * embedded default, which runs here on ports the system picked (never the default 8402), as a user runs them:
 *
 * - The shell blocks of the README and docs/api.md, in order, as one terminal session (`agent-tools` on PATH) that
 *   starts with no variable of ours set. Where a block writes `export AGENT_TOOLS_BASE_URL=http://127.0.0.1:8402`, the
 *   docs tell the reader to run the line `pnpm start` printed instead, and so does this test.
 * - The project set-up lines of the three texts (`npm init -y`, `npm pkg set type=module`, `npm install ...`) in one
 *   empty directory, on the machine's Node and npm, installing from an npm registry on loopback that serves the
 *   packed SDK and, for the rest, the packages installed in this workspace (helpers/package-registry.ts).
 * - Each code example of the three texts in that project: type-checked, then written to the file its first line
 *   names and run with the command it names, with what the texts tell the reader to export: the printed
 *   AGENT_TOOLS_BASE_URL, the key of the demo account the example names in AGENT_TOOLS_PRIVATE_KEY, and the printed
 *   L2 URL in L2_RPC_URL.
 * - The MCP client entries of docs/api.md, with the placeholders they name filled in, and the CLI's help examples.
 *
 * Each must exit 0.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { attachEmbeddedService } from "@agent-tools/server/embedded-process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { machineNode } from "./helpers/machine-node.js";
import { type PackageRegistry, startPackageRegistry } from "./helpers/package-registry.js";
import { balanceOn, l2UrlOf, sendTransfer } from "./helpers/refund-transfer.js";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
// The workspace's TypeScript 7 (the native compiler), which type-checks the code examples.
const typescript = join(
  dirname(createRequire(import.meta.url).resolve("typescript-native/package.json")),
  "bin",
  "tsc",
);
const bin = join(repo, "apps/cli/dist/bin.js");
/** The service's default address, as the docs write it where the reader puts the address `pnpm start` printed. */
const DOC_ORIGIN = "http://127.0.0.1:8402";
/** The texts with code examples, in the order a reader meets them. */
const TEXTS = ["README.md", "packages/sdk/README.md", "docs/api.md"];
/** The embedded default the package's test files share (test/global-setup.ts). */
const service = attachEmbeddedService(inject("embeddedService"));
/** What `pnpm start` printed: the line that points a terminal at it, and its payment chain's URL. */
const printedExport = /^ {2}(export AGENT_TOOLS_BASE_URL=\S+ AGENT_TOOLS_RPC_URL=\S+)$/m.exec(service.output())?.[1];
const printedL2 = /L2 \(payments\)\s+(http:\/\/\S+)/.exec(service.output())?.[1];
let work: string;
let temp: string;
let registry: PackageRegistry;
let project: string;

/** The machine's PATH without this workspace's tools (its Node 24, tsx, ...): what a user's terminal has. */
const userPath = (process.env.PATH ?? "")
  .split(delimiter)
  .filter((dir) => !dir.includes("node_modules"))
  .join(delimiter);

interface Block {
  file: string;
  line: number;
  lang: string;
  body: string;
}

function blocksOf(file: string): Block[] {
  const text = readFileSync(join(repo, file), "utf8");
  return [...text.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({
    file,
    line: text.slice(0, m.index).split("\n").length,
    lang: m[1]!,
    body: m[2]!,
  }));
}

/** The package names of an `npm install` line (its flags and comment left out). */
const packagesOf = (line: string) =>
  line
    .replace(/#.*$/, "")
    .trim()
    .split(/\s+/)
    .slice(2)
    .filter((word) => !word.startsWith("-"));

/**
 * The lines of a text's shell blocks that set up the examples' project, in order: `npm init`, `npm pkg`, and the
 * installs into a project (an install with -g, or of a tarball, is the CLI's or the checkout's: packed.test.ts runs
 * those).
 */
function projectLinesOf(file: string): string[] {
  return blocksOf(file)
    .filter((b) => b.lang === "sh")
    .flatMap((b) => b.body.split("\n"))
    .filter((line) => /^npm (init|pkg|install) /.test(line))
    .filter((line) => !/^npm install\b.*(\s-g\b|\.tgz\b)/.test(line.replace(/#.*$/, "")));
}

/** The packages a code example needs installed: those it imports, and the runner its command names (`npx tsx`). */
function packagesNeededBy(block: Block): string[] {
  const specifiers = [...block.body.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]!);
  const runner = /run with npx (\S+)/.exec(block.body)?.[1];
  return [
    ...specifiers
      .filter((specifier) => !specifier.startsWith("node:"))
      .map((specifier) =>
        specifier
          .split("/")
          .slice(0, specifier.startsWith("@") ? 2 : 1)
          .join("/"),
      ),
    ...(runner ? [runner] : []),
  ];
}

/** Packs a package of this repository as `npm publish` would, and returns the tarball's path. */
function pack(packageDir: string): string {
  const destination = mkdtempSync(join(temp, "pack-"));
  execFileSync("npm", ["pack", "--pack-destination", destination, "--silent"], { cwd: packageDir, encoding: "utf8" });
  return join(destination, readdirSync(destination).find((f) => f.endsWith(".tgz"))!);
}

beforeAll(async () => {
  // A user's working directory: `agent-tools` installed on PATH, and the repository's `apps` where the README runs
  // `node apps/cli/dist/bin.js`.
  work = mkdtempSync(join(tmpdir(), "agent-tools-doc-examples-"));
  mkdirSync(join(work, "bin"));
  writeFileSync(join(work, "bin", "agent-tools"), `#!/bin/sh\nexec "${machineNode}" "${bin}" "$@"\n`);
  chmodSync(join(work, "bin", "agent-tools"), 0o755);
  symlinkSync(join(repo, "apps"), join(work, "apps"));
  // The registry the examples' project installs from: the SDK as published, and what else the texts install.
  temp = mkdtempSync(join(tmpdir(), "agent-tools-doc-project-"));
  const others = [
    ...new Set(
      TEXTS.flatMap(projectLinesOf).flatMap((line) => (line.startsWith("npm install ") ? packagesOf(line) : [])),
    ),
  ].filter((name) => !name.startsWith("@agent-tools/"));
  registry = await startPackageRegistry(
    [{ tarball: pack(join(repo, "packages/sdk")), workspaceDir: join(repo, "packages/sdk") }],
    [{ dir: join(repo, "packages/sdk"), dependencies: others }],
  );
  project = join(temp, "project");
  mkdirSync(project);
}, 120_000);
afterAll(async () => {
  await registry?.close();
  if (work) rmSync(work, { recursive: true, force: true });
  if (temp) rmSync(temp, { recursive: true, force: true });
});

/** The devnet key of demo account #n, the one a text names ("demo account #5"). */
const keyOf = (index: number) => DEVNET_ACCOUNTS[index]!.privateKey;
const namedAccount = (text: string) => /demo account #(\d)/.exec(text)?.[1];

/** A terminal where the reader ran the line `pnpm start` printed: `agent-tools` on PATH. */
const env = () => ({
  PATH: `${join(work, "bin")}${delimiter}${userPath}`,
  AGENT_TOOLS_BASE_URL: service.url,
  AGENT_TOOLS_RPC_URL: printedL2!,
  NO_COLOR: "1",
  HOME: work,
});

/** npm's environment in the examples' project: the registry on loopback, and a cache and config of its own. */
const npmEnv = () => ({
  PATH: userPath,
  HOME: temp,
  npm_config_registry: registry.url,
  npm_config_cache: join(temp, "npm-cache"),
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
});

function run(command: string, args: string[], options: { cwd: string; env: Record<string, string> }) {
  return new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    execFile(command, args, { ...options, encoding: "utf8", timeout: 240_000 }, (error, stdout, stderr) => {
      resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe("what pnpm start prints", () => {
  it("names the address it runs on, and the line that points a terminal there", () => {
    expect(new URL(service.url).port).not.toBe("8402");
    expect(printedExport).toBe(`export AGENT_TOOLS_BASE_URL=${service.url} AGENT_TOOLS_RPC_URL=${printedL2}`);
    expect(printedL2, "the embedded default prints its L2").toBeTruthy();
  });
});

describe("the shell examples of the README and docs/api.md", () => {
  it("run as written, in order, as one terminal session", async () => {
    // The checkout's set-up (npm run setup, pnpm), the install lines (packed.test.ts) and the examples' project
    // set-up (below) are left out: by their commands, not by what their comments mention.
    const commands = (b: Block) => b.body.replace(/#.*$/gm, "");
    const blocks = [...blocksOf("README.md"), ...blocksOf("docs/api.md")].filter(
      (b) =>
        (b.lang === "sh" || b.lang === "console") && !/npm run setup|pnpm |npm (install|init|pack)/.test(commands(b)),
    );
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    const exports: string[] = [];
    let ran = 0;
    for (const block of blocks) {
      const lines = block.body.split("\n");
      for (const [i, raw] of lines.entries()) {
        // A console block's commands carry the prompt; its other lines are output.
        const line = block.lang === "console" ? (raw.startsWith("$ ") ? raw.slice(2) : "") : raw;
        if (!line.trim() || line.trimStart().startsWith("#")) continue;
        const where = `${block.file}:${block.line + i + 1}: ${line}`;
        if (line.startsWith("export ")) {
          // The line pnpm start printed, where the docs say to run it.
          exports.push(line.replace(/^export AGENT_TOOLS_BASE_URL=\S+( AGENT_TOOLS_RPC_URL=\S+)?/, printedExport!));
          continue;
        }
        // The address comes from the export; a command that writes the default port would miss the service.
        expect(line, where).not.toContain(DOC_ORIGIN);
        const { AGENT_TOOLS_BASE_URL: _, AGENT_TOOLS_RPC_URL: __, ...terminal } = env();
        const result = await run("bash", ["-c", [...exports, line].join("\n")], { cwd: work, env: terminal });
        ran++;
        expect(result.status, `${where}\n${result.stderr}${result.stdout}`).toBe(0);
      }
    }
    expect(exports.filter((line) => line.startsWith("export AGENT_TOOLS_BASE_URL="))).not.toEqual([]);
    expect(ran).toBeGreaterThanOrEqual(10);
    // A dozen processes one after another, each waiting on chains: the time they take is the machine's.
  }, 300_000);
});

describe("the README's session", () => {
  it("run twice, each command a process of its own, pays over one channel; its refund comes back on chain", async () => {
    const block = blocksOf("README.md").find((b) => b.lang === "console" && b.body.includes("channels refund"));
    expect(block, "the README's session").toBeDefined();
    const commands = block!.body
      .split("\n")
      .filter((line) => line.startsWith("$ "))
      .map((line) => line.slice(2));
    const [keyLine, ...runs] = commands;
    expect(keyLine).toMatch(/^export AGENT_TOOLS_PRIVATE_KEY=/);
    const payer = DEVNET_ACCOUNTS.find((account) => keyLine!.includes(account.privateKey))!.address;
    const catalog = (await (await fetch(`${service.url}/.well-known/x402`)).json()) as {
      items: { accepts: { asset: string }[] }[];
    };
    const asset = catalog.items[0]!.accepts[0]!.asset;
    // A reader of its own: a home where nothing of an earlier run is kept.
    const home = mkdtempSync(join(tmpdir(), "agent-tools-session-"));
    const { AGENT_TOOLS_BASE_URL: _, AGENT_TOOLS_RPC_URL: __, ...terminal } = { ...env(), HOME: home };
    const channels = new Set<string>();
    try {
      for (let session = 1; session <= 2; session++) {
        for (const command of runs) {
          const before = await balanceOn(printedL2!, asset, payer);
          const result = await run("bash", ["-c", [printedExport!, keyLine!, command].join("\n")], {
            cwd: work,
            env: terminal,
          });
          const where = `session ${session}: ${command}`;
          expect(result.status, `${where}\n${result.stderr}${result.stdout}`).toBe(0);
          for (const [, id] of `${result.stderr}${result.stdout}`.matchAll(/channel (0x[0-9a-f]{64})/g))
            channels.add(id!);
          if (command.endsWith("channels refund")) {
            // What the refund says came back is what the payer's wallet gained on chain.
            // To the cent, or to the unit when a charge by the work done left more digits (1.978).
            const refunded = /^Refunded (\d+)\.(\d{2,6}) USD/m.exec(result.stdout);
            expect(refunded, where).not.toBeNull();
            const units = BigInt(refunded![1]!) * 1_000_000n + BigInt(refunded![2]!.padEnd(6, "0"));
            expect(units).toBeGreaterThan(0n);
            expect(await balanceOn(printedL2!, asset, payer)).toBe(before + units);
          }
        }
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
    expect([...channels]).toHaveLength(1);
  }, 300_000);
});

describe("the code examples", () => {
  const blocks = TEXTS.flatMap((file) => blocksOf(file)).filter((b) => b.lang === "ts");

  it("need only what their own text installs", () => {
    for (const file of TEXTS) {
      const installed = projectLinesOf(file).flatMap((line) =>
        line.startsWith("npm install ") ? packagesOf(line) : [],
      );
      const needed = blocks.filter((b) => b.file === file).flatMap(packagesNeededBy);
      expect(needed.length, file).toBeGreaterThan(0);
      expect(installed, `${file}: what its examples import or run, installed by its own lines`).toEqual(
        expect.arrayContaining(needed),
      );
    }
  });

  it("have their project set up as the texts say, in an empty directory, once", async () => {
    // The texts in order, as a reader who reads them all sets up one project: a line already run, or an install of
    // packages already installed, is not run again.
    const lines = TEXTS.flatMap(projectLinesOf);
    // The first, in the empty directory, makes it an npm project of ES modules.
    expect(lines[0]).toMatch(/^npm init -y && npm pkg set type=module\b/);
    const ran = new Set<string>();
    const installed = new Set<string>();
    for (const line of lines) {
      const install = line.startsWith("npm install ") ? packagesOf(line) : undefined;
      if (ran.has(line) || install?.every((name) => installed.has(name))) continue;
      ran.add(line);
      for (const name of install ?? []) installed.add(name);
      const result = await run("bash", ["-c", line], { cwd: project, env: npmEnv() });
      expect(result.status, `${line}\n${result.stderr}`).toBe(0);
    }
    // Nothing of this repository but the SDK, as published.
    expect([...registry.requested].filter((name) => name.startsWith("@agent-tools/"))).toEqual(["@agent-tools/sdk"]);
  }, 300_000);

  it("type-check as written, strictly, against the installed packages' declarations", async () => {
    // Each example in a file of its own (two texts may name the same file), beside the project's node_modules.
    const dir = join(project, "type-check");
    mkdirSync(dir);
    const files = blocks.map((block, i) => {
      const file = join(dir, `${i}-${/^\/\/ (\S+):/.exec(block.body)?.[1] ?? "example.ts"}`);
      writeFileSync(file, block.body);
      return file;
    });
    // TypeScript 7 (the workspace's), with Node's types.
    const options = ["--noEmit", "--strict", "--module", "nodenext", "--target", "es2022"];
    const types = ["--types", "node", "--typeRoots", join(repo, "node_modules/@types")];
    const result = await run(machineNode, [typescript, ...options, ...types, ...files], {
      cwd: project,
      env: npmEnv(),
    });
    // An error names the text and line of the example.
    const named = result.stdout.replace(/^type-check\/(\d+)-\S+?\(/gm, (_, i) => {
      const block = blocks[Number(i)]!;
      return `${block.file}:${block.line} (`;
    });
    expect(named + result.stderr).toBe("");
    expect(result.status).toBe(0);
  }, 120_000);

  it.each(blocks.map((b) => [`${b.file}:${b.line}`, b] as const))(
    "%s runs as written",
    async (where, block) => {
      // `// intel.ts: run with npx tsx intel.ts`
      const named = /^\/\/ (\S+): run with (.+)$/m.exec(block.body.split("\n")[0]!);
      expect(named, `${where}: the first line names the file and the command`).not.toBeNull();
      const [, file, command] = named!;
      // The one address it writes is the fallback of the variable the docs set.
      const written = block.body.match(/"http:\/\/127\.0\.0\.1:8402"/g) ?? [];
      const fallbacks = block.body.match(/process\.env\.AGENT_TOOLS_BASE_URL \?\? "http:\/\/127\.0\.0\.1:8402"/g) ?? [];
      expect(written.length, `${where}: an address not read from AGENT_TOOLS_BASE_URL`).toBe(fallbacks.length);
      const account = namedAccount(block.body);
      expect(account, `${where}: names the demo account it pays with`).toBeDefined();
      writeFileSync(join(project, file!), block.body);
      const result = await run("bash", ["-c", command!], {
        cwd: project,
        env: {
          ...npmEnv(),
          AGENT_TOOLS_BASE_URL: service.url,
          AGENT_TOOLS_PRIVATE_KEY: keyOf(Number(account)),
          L2_RPC_URL: printedL2!,
        },
      });
      expect(result.status, `${where}\n${result.stderr}${result.stdout}`).toBe(0);
    },
    120_000,
  );
});

/** `agent-tools <args>` started as a user starts it, until `ready` says it is working; then stopped. */
function runUntil(args: string[], key: string, ready: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(machineNode, [bin, ...args], {
      cwd: work,
      env: { ...env(), AGENT_TOOLS_PRIVATE_KEY: key },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let output = "";
    const check = () => {
      if (ready.test(output)) {
        child.kill("SIGTERM");
        resolve(output);
      }
    };
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      check();
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      check();
    });
    child.on("exit", (code) => {
      if (!ready.test(output)) reject(new Error(`agent-tools ${args.join(" ")} exited ${code}:\n${output}`));
    });
  });
}

/**
 * A refund to book, as the refund command's help examples need one: a payment made now with `exact` (demo account
 * #1's intel on token 1) and a transfer of one unit of it back from PAY_TO (demo account #0). Made once; a refund booked already is
 * answered again, so every example that books it exits 0.
 */
let refundToBook: Promise<{ payer: string; nonce: string; transaction: string }> | undefined;
function bookableRefund() {
  refundToBook ??= (async () => {
    // With `exact`: a transfer back refunds a payment that moved money of its own.
    const paid = await run(machineNode, [bin, "--no-channel", "intel", "--token-id", "1"], {
      cwd: work,
      env: { ...env(), AGENT_TOOLS_PRIVATE_KEY: keyOf(1) },
    });
    const transaction = /· tx (0x[0-9a-f]{64})/.exec(paid.stderr)?.[1];
    const exported = await run(machineNode, [bin, "ledger", "--format", "jsonl"], {
      cwd: work,
      env: { ...env(), AGENT_TOOLS_PRIVATE_KEY: keyOf(0) },
    });
    const payment = exported.stdout
      .trimEnd()
      .split("\n")
      .map(
        (line) =>
          JSON.parse(line) as { kind: string; transaction: string; payer: string; nonce: string; asset: string },
      )
      .find((entry) => entry.kind === "payment" && entry.transaction === transaction);
    expect(payment, `the ledger lists the payment ${transaction}\n${paid.stderr}`).toBeDefined();
    const refund = await sendTransfer(l2UrlOf(service.output()), {
      from: DEVNET_ACCOUNTS[0]!.address,
      asset: payment!.asset,
      to: payment!.payer,
      amount: 1n,
    });
    return { payer: payment!.payer, nonce: payment!.nonce, transaction: refund };
  })();
  return refundToBook;
}

describe("the CLI's --help examples", () => {
  it("run as written against the embedded default, each with the key of the token's holder", async () => {
    // Every command's help, and the root's.
    const root = await run(machineNode, [bin, "--help"], { cwd: work, env: env() });
    const commands = [...root.stdout.matchAll(/^ {2}([a-z-]+)(?: \[options\]| <|\s{2,})/gm)].map((m) => m[1]!);
    expect(commands).toContain("drop-radar");
    const helps = [root.stdout];
    for (const command of commands.filter((c) => c !== "help")) {
      helps.push((await run(machineNode, [bin, command, "--help"], { cwd: work, env: env() })).stdout);
    }
    const examples = [
      ...new Set(
        helps.flatMap((help) =>
          [...help.matchAll(/^ {2}\$ agent-tools (.+)$/gm)].map((m) => m[1]!.replace(/\s+#.*$/, "")),
        ),
      ),
    ];
    expect(examples.length).toBeGreaterThanOrEqual(15);
    // The ledger and console examples read the operator's key from operator.key: demo account #0 on the embedded
    // default.
    writeFileSync(join(work, "operator.key"), `${keyOf(0)}\n`);
    for (const example of examples) {
      const args = [...example.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
      const tokenId = Number(/--token-id (\d+)/.exec(example)?.[1] ?? 1);
      // Demo account #i holds tokens i, i + 9, i + 18, ...; the ledger's, the console's and refund's help name the
      // operator's key (#0).
      const key = ["ledger", "console", "refund"].includes(args[0]!) ? keyOf(0) : keyOf(((tokenId - 1) % 9) + 1);
      // A refund example names a payment and a transfer of the right form: a real one stands in for them, as the
      // service's address stands in for the docs' origin.
      if (args[0] === "refund") {
        const real = await bookableRefund();
        for (const flag of ["payer", "nonce", "transaction"] as const) {
          const at = args.indexOf(`--${flag}`);
          expect(at, `agent-tools ${example} names --${flag}`).toBeGreaterThan(0);
          args[at + 1] = real[flag];
        }
      }
      if (args.includes("--watch")) {
        expect(await runUntil(args, key, /Agent|drops?\b/i)).not.toMatch(/^agent-tools:/m);
        continue;
      }
      if (args[0] === "mcp") {
        expect(await runUntil(args, key, /agent-tools mcp: serving/)).toContain("paying up to");
        continue;
      }
      const result = await run(machineNode, [bin, ...args], {
        cwd: work,
        env: { ...env(), AGENT_TOOLS_PRIVATE_KEY: key },
      });
      expect(result.status, `agent-tools ${example}\n${result.stderr}${result.stdout}`).toBe(0);
    }
    // Some thirty processes one after another: the time they take is the machine's.
  }, 600_000);
});

describe("the MCP client set-ups of docs/api.md", () => {
  const blocks = blocksOf("docs/api.md");
  const intelOf = async (client: Client) =>
    (await client.callTool({ name: "intel", arguments: { tokenId: 1 } })) as CallToolResult;

  /** An MCP server entry started as Claude Desktop, Cursor or Claude Code start one: its command over stdio. */
  async function stdio(command: string, args: string[], entryEnv: Record<string, string>): Promise<Client> {
    const client = new Client({ name: "desktop-agent", version: "1.0.0" });
    // The desktop agent's environment, not a terminal's: the entry says where the service is.
    const { AGENT_TOOLS_BASE_URL: _, ...desktop } = env();
    await client.connect(
      new StdioClientTransport({ command, args, env: { ...desktop, ...entryEnv }, cwd: work, stderr: "ignore" }),
    );
    return client;
  }

  it("Claude Desktop's and Cursor's entry starts the bridge: it lists the tools and pays a call", async () => {
    const block = blocks.find((b) => b.lang === "json" && b.body.includes('"mcpServers"'));
    expect(block, "a json block with mcpServers").toBeDefined();
    // The service's address in place of the default one, as the text says.
    const entry = JSON.parse(block!.body.replaceAll(DOC_ORIGIN, service.url)).mcpServers["agent-tools"] as {
      command: string;
      args: string[];
      env: Record<string, string>;
    };
    // The entry's key placeholder, filled in with demo account #1's key (it holds token 1).
    expect(entry.env.AGENT_TOOLS_PRIVATE_KEY).toBe("0x...");
    const client = await stdio(entry.command, entry.args, { ...entry.env, AGENT_TOOLS_PRIVATE_KEY: keyOf(1) });
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("intel");
      const paid = await intelOf(client);
      expect(paid.isError, JSON.stringify(paid.content)).toBeFalsy();
      expect(paid.structuredContent).toMatchObject({ tokenId: 1 });
    } finally {
      await client.close();
    }
  });

  it("Claude Code's lines: the bridge over stdio pays a call; the endpoint by URL lists the tools and reads a price", async () => {
    const block = blocks.find((b) => b.lang === "text" && b.body.includes("claude mcp add"));
    expect(block, "a text block with claude mcp add").toBeDefined();
    const lines = block!.body.trim().split("\n");
    /** A line's words as the reader's shell hands them to `claude`, AGENT_TOOLS_BASE_URL exported as printed. */
    const wordsOf = async (line: string) => {
      const printed = await run("bash", ["-c", `set -- ${line}; printf '%s\\0' "$@"`], { cwd: work, env: env() });
      return printed.stdout.split("\0").slice(0, -1);
    };

    // `claude mcp add <name> --env K=V -- <command> <args...>`
    const bridgeWords = await wordsOf(lines.find((line) => line.includes(" -- "))!);
    const options = bridgeWords.slice(0, bridgeWords.indexOf("--"));
    const entryEnv = Object.fromEntries(
      options.flatMap((word, i) => (options[i - 1] === "--env" ? [word.split(/=(.*)/s).slice(0, 2)] : [])),
    );
    expect(entryEnv.AGENT_TOOLS_PRIVATE_KEY).toBe("0x...");
    const [command, ...args] = bridgeWords.slice(bridgeWords.indexOf("--") + 1) as [string, ...string[]];
    expect(args).toContain(service.url);
    const bridge = await stdio(command, args, { ...entryEnv, AGENT_TOOLS_PRIVATE_KEY: keyOf(1) });
    try {
      const paid = await intelOf(bridge);
      expect(paid.isError, JSON.stringify(paid.content)).toBeFalsy();
    } finally {
      await bridge.close();
    }

    // `claude mcp add --transport http <name> <url>`
    const url = (await wordsOf(lines.find((line) => line.includes("--transport http"))!)).at(-1)!;
    expect(url).toBe(`${service.url}/mcp`);
    const remote = new Client({ name: "claude-code", version: "1.0.0" });
    await remote.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      expect((await remote.listTools()).tools.map((tool) => tool.name)).toContain("intel");
      const unpaid = await intelOf(remote);
      expect(unpaid.isError).toBe(true);
      // x402's tool-result binding: the PaymentRequired as structuredContent, and the same as JSON in the text.
      // The price, in each scheme the service takes: exact, over a payment channel, and as an upto ceiling.
      const quote = {
        accepts: [
          expect.objectContaining({ scheme: "exact", amount: "1000000" }),
          expect.objectContaining({ scheme: "batch-settlement", amount: "1000000" }),
          expect.objectContaining({ scheme: "upto", amount: "1000000" }),
        ],
      };
      expect(unpaid.structuredContent).toMatchObject(quote);
      expect(JSON.parse((unpaid.content[0] as { text: string }).text)).toEqual(unpaid.structuredContent);
    } finally {
      await remote.close();
    }
  }, 120_000);
});
