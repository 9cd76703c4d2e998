/**
 * Compiles `contracts/*.sol` with solc-js (no network: the compiler ships in the `solc` npm package) and renders
 * the generated TypeScript modules. Shared by `scripts/compile.ts` and the artifacts-up-to-date test.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";

export const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const CONTRACTS_DIR = path.join(PACKAGE_DIR, "contracts");
export const ARTIFACTS_DIR = path.join(PACKAGE_DIR, "artifacts");
export const ABIS_FILE = path.join(PACKAGE_DIR, "src", "abis.ts");
export const BYTECODE_FILE = path.join(PACKAGE_DIR, "src", "bytecode.ts");

/** The contracts that get an artifact, in the order the generated modules list them. */
export const CONTRACT_NAMES = [
  "AgentCollection",
  "IdentityRegistry",
  "AgentBindings",
  "UsdToken",
  "B20Factory",
  "B20Token",
  "B20StablecoinToken",
  "Multicall3",
  "BatchSettlement",
  "Erc3009DepositCollector",
  "Permit2",
  "X402UptoPermit2Proxy",
] as const;
export type ContractName = (typeof CONTRACT_NAMES)[number];

export const SOLC_SETTINGS = {
  evmVersion: "cancun",
  optimizer: { enabled: true, runs: 200 },
  outputSelection: {
    "*": {
      "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object", "evm.deployedBytecode.immutableReferences"],
    },
  },
} as const;

export interface AbiParameter {
  name?: string;
  type: string;
  internalType?: string;
  indexed?: boolean;
  components?: readonly AbiParameter[];
}

export interface AbiItem {
  type: string;
  name?: string;
  inputs?: readonly AbiParameter[];
  outputs?: readonly AbiParameter[];
  stateMutability?: string;
  anonymous?: boolean;
}

export interface Artifact {
  contractName: ContractName;
  sourceName: string;
  compiler: { version: string; settings: typeof SOLC_SETTINGS };
  sourceHash: string;
  abi: AbiItem[];
  bytecode: `0x${string}`;
  deployedBytecode: `0x${string}`;
  /** Offsets of immutables in `deployedBytecode` (empty for code the devnet places with `hardhat_setCode`). */
  immutableReferences: Record<string, { start: number; length: number }[]>;
}

export interface CompileResult {
  solcVersion: string;
  sourceHash: string;
  artifacts: Record<ContractName, Artifact>;
  warnings: string[];
}

interface SolcMessage {
  severity: "error" | "warning" | "info";
  formattedMessage?: string;
  message: string;
}

interface SolcContractOutput {
  abi: AbiItem[];
  evm: {
    bytecode: { object: string };
    deployedBytecode: { object: string; immutableReferences?: Artifact["immutableReferences"] };
  };
}

interface SolcOutput {
  errors?: SolcMessage[];
  contracts?: Record<string, Record<string, SolcContractOutput>>;
}

function listSolidityFiles(dir: string, prefix: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const rel = `${prefix}/${entry.name}`;
    if (entry.isDirectory()) out.push(...listSolidityFiles(path.join(dir, entry.name), rel));
    else if (entry.name.endsWith(".sol")) out.push(rel);
  }
  return out.sort();
}

/** Resolves a non-local import (e.g. `@openzeppelin/contracts/...`) from the package's node_modules. */
function resolveImport(importPath: string): string | undefined {
  const normalized = path.posix.normalize(importPath);
  if (normalized.startsWith("..") || path.isAbsolute(normalized)) return undefined;
  const candidates = [path.join(PACKAGE_DIR, normalized), path.join(PACKAGE_DIR, "node_modules", normalized)];
  return candidates.find((candidate) => existsSync(candidate));
}

/** sha256 over the solc version, the settings and every source (local and imported), sorted by unit name. */
export function hashSources(solcVersion: string, sources: ReadonlyMap<string, string>): string {
  const hash = createHash("sha256");
  hash.update(`solc ${solcVersion}\n`);
  hash.update(`${JSON.stringify(SOLC_SETTINGS)}\n`);
  for (const name of [...sources.keys()].sort()) {
    hash.update(`${name}\n${sources.get(name)}\n`);
  }
  return hash.digest("hex");
}

export function solcVersion(): string {
  return String(solc.version());
}

export function compileAll(): CompileResult {
  const version = solcVersion();
  const loaded = new Map<string, string>();
  const sources: Record<string, { content: string }> = {};
  for (const unit of listSolidityFiles(CONTRACTS_DIR, "contracts")) {
    const content = readFileSync(path.join(PACKAGE_DIR, unit), "utf8");
    sources[unit] = { content };
    loaded.set(unit, content);
  }

  const findImports = (importPath: string): { contents: string } | { error: string } => {
    const file = resolveImport(importPath);
    if (!file) return { error: `File not found: ${importPath}` };
    const contents = readFileSync(file, "utf8");
    loaded.set(importPath, contents);
    return { contents };
  };

  const input = { language: "Solidity", sources, settings: SOLC_SETTINGS };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as SolcOutput;

  const messages = output.errors ?? [];
  const errors = messages.filter((m) => m.severity === "error");
  if (errors.length > 0) {
    throw new Error(`solc ${version} failed:\n${errors.map((e) => e.formattedMessage ?? e.message).join("\n")}`);
  }
  const warnings = messages.filter((m) => m.severity === "warning").map((m) => m.formattedMessage ?? m.message);

  const sourceHash = hashSources(version, loaded);
  const artifacts = {} as Record<ContractName, Artifact>;
  for (const name of CONTRACT_NAMES) {
    const sourceName = `contracts/${name}.sol`;
    const compiled = output.contracts?.[sourceName]?.[name];
    if (!compiled) throw new Error(`solc produced no output for ${sourceName}:${name}`);
    artifacts[name] = {
      contractName: name,
      sourceName,
      compiler: { version, settings: SOLC_SETTINGS },
      sourceHash,
      abi: compiled.abi,
      bytecode: `0x${compiled.evm.bytecode.object}`,
      deployedBytecode: `0x${compiled.evm.deployedBytecode.object}`,
      immutableReferences: compiled.evm.deployedBytecode.immutableReferences ?? {},
    };
  }
  return { solcVersion: version, sourceHash, artifacts, warnings };
}

/** `AgentCollection` -> `agentCollection`. */
export function camelName(name: ContractName): string {
  return name.charAt(0).toLowerCase() + name.slice(1);
}

const GENERATED_HEADER = "// Generated by scripts/compile.ts from contracts/*.sol with solc-js. Do not edit.\n";

export function renderAbisModule(result: CompileResult): string {
  const parts = [GENERATED_HEADER];
  for (const name of CONTRACT_NAMES) {
    parts.push(
      `\n/** ABI of \`${name}\` (contracts/${name}.sol). */\nexport const ${camelName(name)}Abi = ${JSON.stringify(
        result.artifacts[name].abi,
        null,
        2,
      )} as const;\n`,
    );
  }
  return parts.join("");
}

export function renderBytecodeModule(result: CompileResult): string {
  const parts = [GENERATED_HEADER];
  parts.push(
    `\n/** solc version the bytecode below was compiled with. */\nexport const SOLC_VERSION = "${result.solcVersion}";\n`,
  );
  parts.push(
    `\n/** sha256 of the compiler version, settings and all sources (see artifacts/*.json \`sourceHash\`). */\nexport const CONTRACTS_SOURCE_HASH = "${result.sourceHash}";\n`,
  );
  for (const name of CONTRACT_NAMES) {
    const artifact = result.artifacts[name];
    parts.push(
      `\n/** Creation bytecode of \`${name}\`. */\nexport const ${camelName(name)}Bytecode: \`0x\${string}\` =\n  "${artifact.bytecode}";\n`,
    );
    parts.push(
      `\n/** Runtime bytecode of \`${name}\`. */\nexport const ${camelName(name)}DeployedBytecode: \`0x\${string}\` =\n  "${artifact.deployedBytecode}";\n`,
    );
  }
  return parts.join("");
}
