import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

describe("the browser build", () => {
  it("bundles for the browser with no Node built-in module", async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL("../dist/index.js", import.meta.url))],
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    expect(result.errors).toEqual([]);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((path) => path.startsWith("node:") || /\/node_modules\/(undici|ws)\//.test(path))).toEqual([]);
    const code = result.outputFiles[0]!.text;
    expect(code).toContain("createAgentToolsClient");
    expect(code).not.toMatch(/require\(["']node:/);
  });
});
