/**
 * Every example of README.md, docs/api.md, packages/sdk/README.md and the CLI's --help, run as written against the embedded
 * default (`pnpm start`), with the key the text names: the shell blocks as one terminal session (`agent-tools` on
 * PATH, the service's address for http://127.0.0.1:8402), the TypeScript blocks as scripts next to the SDK, the help
 * examples as the built binary. Each must exit 0.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { attachEmbeddedService } from "@agent-tools/server/embedded-process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { machineNode } from "./helpers/machine-node.js";
import { l2UrlOf, sendTransfer } from "./helpers/refund-transfer.js";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const bin = join(repo, "apps/cli/dist/bin.js");
const DOC_ORIGIN = "http://127.0.0.1:8402";
/** The embedded default's payment chain (L2) as the docs write it, at its default port. */
const DOC_L2 = "http://127.0.0.1:8546";
/** The embedded default the package's test files share (test/global-setup.ts). */
const service = attachEmbeddedService(inject("embeddedService"));
let work: string;

beforeAll(async () => {
  // A user's working directory: `agent-tools` installed on PATH, and the repository's `apps` where the README runs
  // `node apps/cli/dist/bin.js`.
  work = mkdtempSync(join(tmpdir(), "agent-tools-doc-examples-"));
  mkdirSync(join(work, "bin"));
  writeFileSync(join(work, "bin", "agent-tools"), `#!/bin/sh\nexec "${machineNode}" "${bin}" "$@"\n`);
  chmodSync(join(work, "bin", "agent-tools"), 0o755);
  symlinkSync(join(repo, "apps"), join(work, "apps"));
}, 120_000);
afterAll(async () => {
  if (work) rmSync(work, { recursive: true, force: true });
});

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

/** The devnet key of demo account #n, the one a text names ("demo account #5"). */
const keyOf = (index: number) => DEVNET_ACCOUNTS[index]!.privateKey;
const namedAccount = (text: string) => Number(/demo account #(\d)/.exec(text)?.[1] ?? 1);

const env = () => ({
  PATH: `${join(work, "bin")}${delimiter}${process.env.PATH ?? ""}`,
  AGENT_TOOLS_BASE_URL: service.url,
  NO_COLOR: "1",
  HOME: work,
});

function run(command: string, args: string[], options: { cwd: string; env: Record<string, string> }) {
  return new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    execFile(command, args, { ...options, encoding: "utf8", timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe("the shell examples of the README and docs/api.md", () => {
  it("run as written, in order, as one terminal session", async () => {
    const blocks = [...blocksOf("README.md"), ...blocksOf("docs/api.md")].filter(
      (b) => (b.lang === "sh" || b.lang === "console") && !/npm run setup|pnpm |npm install/.test(b.body), // set-up, and the install lines (packed.test.ts)
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
        const command = line.replaceAll(DOC_ORIGIN, service.url);
        if (command.startsWith("export ")) {
          exports.push(command);
          continue;
        }
        const result = await run("bash", ["-c", [...exports, command].join("\n")], { cwd: work, env: env() });
        ran++;
        expect(result.status, `${block.file}:${block.line + i + 1}: ${line}\n${result.stderr}${result.stdout}`).toBe(0);
      }
    }
    expect(ran).toBeGreaterThanOrEqual(10);
    // A dozen processes one after another, each waiting on chains: the time they take is the machine's.
  }, 300_000);
});

describe("the TypeScript examples", () => {
  const blocks = [...blocksOf("README.md"), ...blocksOf("docs/api.md"), ...blocksOf("packages/sdk/README.md")].filter(
    (b) => b.lang === "ts",
  );
  it.each(blocks.map((b) => [`${b.file}:${b.line}`, b] as const))("%s runs as written", async (_where, block) => {
    // Next to the SDK, so that `@agent-tools/sdk` resolves to it as an installed package would.
    const dir = mkdtempSync(join(repo, "packages/sdk/.doc-example-"));
    try {
      const script = join(dir, "example.mts");
      const l2 = /L2 \(payments\)\s+(http:\/\/\S+)/.exec(service.output())?.[1];
      expect(l2, "the embedded default prints its L2").toBeTruthy();
      writeFileSync(script, block.body.replaceAll(DOC_ORIGIN, service.url).replaceAll(DOC_L2, l2!));
      const result = await run(process.execPath, [script], {
        cwd: dir,
        env: { ...env(), AGENT_TOOLS_PRIVATE_KEY: keyOf(namedAccount(block.body)) },
      });
      expect(result.status, `${block.file}:${block.line}\n${result.stderr}${result.stdout}`).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
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
 * A refund to book, as the refund command's help examples need one: a payment made now (demo account #1's intel on
 * token 1) and a transfer of one unit of it back from PAY_TO (demo account #0). Made once; a refund booked already is
 * answered again, so every example that books it exits 0.
 */
let refundToBook: Promise<{ payer: string; nonce: string; transaction: string }> | undefined;
function bookableRefund() {
  refundToBook ??= (async () => {
    const paid = await run(machineNode, [bin, "intel", "--token-id", "1"], {
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
    // The ledger examples read the operator's key from operator.key: demo account #0 on the embedded default.
    writeFileSync(join(work, "operator.key"), `${keyOf(0)}\n`);
    for (const example of examples) {
      const args = [...example.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
      const tokenId = Number(/--token-id (\d+)/.exec(example)?.[1] ?? 1);
      // Demo account #i holds tokens i, i + 9, i + 18, ...; the ledger's and refund's help name the operator's key (#0).
      const key = args[0] === "ledger" || args[0] === "refund" ? keyOf(0) : keyOf(((tokenId - 1) % 9) + 1);
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
    await client.connect(
      new StdioClientTransport({ command, args, env: { ...env(), ...entryEnv }, cwd: work, stderr: "ignore" }),
    );
    return client;
  }

  it("Claude Desktop's and Cursor's entry starts the bridge: it lists the tools and pays a call", async () => {
    const block = blocks.find((b) => b.lang === "json" && b.body.includes('"mcpServers"'));
    expect(block, "a json block with mcpServers").toBeDefined();
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
    const lines = block!.body.replaceAll(DOC_ORIGIN, service.url).trim().split("\n");

    // `claude mcp add <name> --env K=V -- <command> <args...>`
    const bridgeLine = lines.find((line) => line.includes(" -- "))!;
    const [options, commandLine] = bridgeLine.split(" -- ") as [string, string];
    const entryEnv = Object.fromEntries([...options.matchAll(/--env (\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
    expect(entryEnv.AGENT_TOOLS_PRIVATE_KEY).toBe("0x...");
    const [command, ...args] = commandLine.trim().split(/\s+/) as [string, ...string[]];
    const bridge = await stdio(command, args, { ...entryEnv, AGENT_TOOLS_PRIVATE_KEY: keyOf(1) });
    try {
      const paid = await intelOf(bridge);
      expect(paid.isError, JSON.stringify(paid.content)).toBeFalsy();
    } finally {
      await bridge.close();
    }

    // `claude mcp add --transport http <name> <url>`
    const urlLine = lines.find((line) => line.includes("--transport http"))!;
    const url = urlLine.trim().split(/\s+/).at(-1)!;
    const remote = new Client({ name: "claude-code", version: "1.0.0" });
    await remote.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      expect((await remote.listTools()).tools.map((tool) => tool.name)).toContain("intel");
      const unpaid = await intelOf(remote);
      expect(unpaid.isError).toBe(true);
      // x402's tool-result binding: the PaymentRequired as structuredContent, and the same as JSON in the text.
      const quote = { accepts: [expect.objectContaining({ amount: "1000000" })] };
      expect(unpaid.structuredContent).toMatchObject(quote);
      expect(JSON.parse((unpaid.content[0] as { text: string }).text)).toEqual(unpaid.structuredContent);
    } finally {
      await remote.close();
    }
  }, 120_000);
});
