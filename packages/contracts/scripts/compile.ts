/**
 * Compiles the Solidity sources with solc-js and writes:
 *   - artifacts/<Name>.json  ({ contractName, sourceName, compiler, sourceHash, abi, bytecode, deployedBytecode,
 *                               immutableReferences })
 *   - src/abis.ts            (`export const <name>Abi = [...] as const;` for viem)
 *   - src/bytecode.ts        (creation and runtime bytecode as `0x${string}`)
 * The generated TypeScript is formatted with the workspace's biome so that `biome check` stays clean.
 *
 * Usage: `tsx scripts/compile.ts` (from packages/contracts).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  ABIS_FILE,
  ARTIFACTS_DIR,
  BYTECODE_FILE,
  CONTRACT_NAMES,
  compileAll,
  PACKAGE_DIR,
  renderAbisModule,
  renderBytecodeModule,
} from "./solc.js";

const started = Date.now();
const result = compileAll();

for (const warning of result.warnings) console.warn(warning);

mkdirSync(ARTIFACTS_DIR, { recursive: true });
const expected = new Set(CONTRACT_NAMES.map((name) => `${name}.json`));
for (const file of readdirSync(ARTIFACTS_DIR)) {
  if (file.endsWith(".json") && !expected.has(file)) rmSync(path.join(ARTIFACTS_DIR, file));
}
for (const name of CONTRACT_NAMES) {
  writeFileSync(path.join(ARTIFACTS_DIR, `${name}.json`), `${JSON.stringify(result.artifacts[name], null, 2)}\n`);
}

writeFileSync(ABIS_FILE, renderAbisModule(result));
writeFileSync(BYTECODE_FILE, renderBytecodeModule(result));

const biome = path.resolve(PACKAGE_DIR, "../../node_modules/.bin/biome");
if (existsSync(biome)) {
  const formatted = spawnSync(biome, ["format", "--write", ABIS_FILE, BYTECODE_FILE], {
    cwd: PACKAGE_DIR,
    stdio: "inherit",
  });
  if (formatted.status !== 0) {
    console.error("biome format failed on the generated modules");
    process.exitCode = 1;
  }
} else {
  console.warn(`biome not found at ${biome}: generated modules left unformatted`);
}

const sizes = CONTRACT_NAMES.map(
  (name) => `${name} ${(result.artifacts[name].deployedBytecode.length - 2) / 2} B`,
).join(", ");
console.log(
  `solc ${result.solcVersion}: ${CONTRACT_NAMES.length} contracts in ${Date.now() - started} ms (${sizes}); ` +
    `sourceHash ${result.sourceHash}`,
);
