// Every export of the packages' public entries carries a doc comment (JSDoc), and every `@example` in those comments
// type-checks against the entries, with `client` and `operatorClient` (AgentToolsClient) and `key` (a private key) in
// scope: lists what fails and exits 1. Run by `pnpm test` as `pnpm --silent exports:documented`; the entries are the
// arguments.
import { resolve } from "node:path";
import ts from "typescript";

const entries = process.argv.slice(2).map((entry) => resolve(entry));
const parsed = ts.getParsedCommandLineOfConfigFile(
  resolve("tsconfig.base.json"),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
    },
  },
);
// The workspace's packages are read from their sources, not from their builds: the check needs no build first.
const options: ts.CompilerOptions = {
  ...parsed?.options,
  noEmit: true,
  paths: {
    "@agent-tools/schema": [resolve("packages/schema/src/index.ts")],
    "@agent-tools/sdk": [resolve("packages/sdk/src/index.ts")],
    "@agent-tools/sdk/*": [resolve("packages/sdk/src/*.ts")],
  },
};
const program = ts.createProgram(entries, options);
const checker = program.getTypeChecker();

/** A symbol is documented when its declaration has a doc comment, or it re-exports one that has. */
function documented(symbol: ts.Symbol): boolean {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  if (target.getDocumentationComment(checker).length > 0) return true;
  // A declaration may carry only tags (`@example`, `@param`), which is documentation too.
  return (target.declarations ?? []).some((declaration) => ts.getJSDocCommentsAndTags(declaration).length > 0);
}

const missing: string[] = [];
for (const entry of entries) {
  const source = program.getSourceFile(entry);
  const module = source && checker.getSymbolAtLocation(source);
  if (!module) throw new Error(`${entry} is not a module of the program`);
  for (const symbol of checker.getExportsOfModule(module)) {
    if (documented(symbol)) continue;
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const where = target.declarations?.[0];
    const file = where ? where.getSourceFile() : undefined;
    const line = where && file ? file.getLineAndCharacterOfPosition(where.getStart()).line + 1 : 0;
    missing.push(`${symbol.name}  (${file ? `${file.fileName.replace(`${process.cwd()}/`, "")}:${line}` : entry})`);
  }
}

/** The `@example` blocks of every export and of its members (a client's methods), with where they are. */
function examplesOf(symbol: ts.Symbol): { where: string; code: string }[] {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const symbols = [target, ...(target.members ? [...target.members.values()] : [])];
  return symbols.flatMap((each) =>
    each.getJsDocTags(checker).flatMap((tag) =>
      tag.name === "example" && tag.text
        ? [
            {
              where: `${symbol.name}${each === target ? "" : `.${each.name}`}`,
              code: ts.displayPartsToString(tag.text),
            },
          ]
        : [],
    ),
  );
}

const examples = entries.flatMap((entry) => {
  const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
  return checker.getExportsOfModule(module).flatMap(examplesOf);
});
const uniqueExamples = [...new Map(examples.map((e) => [`${e.where}\n${e.code}`, e])).values()];
// Each example is the body of a function of its own; its imports go to the top of the file.
const imports = new Set<string>();
const bodies = uniqueExamples.map(({ where, code }, i) => {
  const lines = code.split("\n").filter((line) => {
    if (!line.startsWith("import ")) return true;
    imports.add(line);
    return false;
  });
  return `// ${where}\nexport async function example${i}() {\n${lines.join("\n")}\n}`;
});
const examplesFile = resolve("packages/sdk/src/__examples__.ts");
const source = [
  ...imports,
  'import type { AgentToolsClient } from "@agent-tools/sdk";',
  "declare const client: AgentToolsClient;",
  "declare const operatorClient: AgentToolsClient;",
  'import type { Hex } from "viem";',
  "declare const key: Hex;",
  ...bodies,
].join("\n");
const host = ts.createCompilerHost(options);
const readFile = host.readFile.bind(host);
const fileExists = host.fileExists.bind(host);
const getSourceFile = host.getSourceFile.bind(host);
host.readFile = (file) => (file === examplesFile ? source : readFile(file));
host.fileExists = (file) => file === examplesFile || fileExists(file);
host.getSourceFile = (file, language, ...rest) =>
  file === examplesFile ? ts.createSourceFile(file, source, language) : getSourceFile(file, language, ...rest);
const checked = ts.createProgram([examplesFile], { ...options, noUnusedLocals: false }, host, program);
const broken = ts.getPreEmitDiagnostics(checked, checked.getSourceFile(examplesFile)).map((diagnostic) => {
  if (!diagnostic.file) return ts.flattenDiagnosticMessageText(diagnostic.messageText, " ");
  const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
  const owner = source
    .split("\n")
    .slice(0, line + 1)
    .reverse()
    .find((text) => text.startsWith("// "));
  return `${owner?.slice(3) ?? "?"}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`;
});

const unique = [...new Set(missing)].sort();
if (unique.length > 0) {
  process.stderr.write(`Exports without a doc comment (${unique.length}):\n  ${unique.join("\n  ")}\n`);
}
if (broken.length > 0) {
  process.stderr.write(`Examples that do not type-check (${broken.length}):\n  ${broken.join("\n  ")}\n`);
}
if (unique.length > 0 || broken.length > 0) process.exit(1);
process.stdout.write(
  `Every export of ${entries.length} entries is documented; ${uniqueExamples.length} examples type-check.\n`,
);
