import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, sep } from "node:path";

/**
 * An npm registry on loopback, standing in for the public one: it serves tarballs packed from this repository as
 * if they were published, and their dependencies from the packages installed in this workspace, so npm installs
 * them as a user's npm would, without leaving the machine. It has the published tarballs, the packages of others a
 * test asks it to serve beside them, and the dependency closure of each (dependencies, optional dependencies and
 * required peer dependencies, as installed in the workspace; for a published package, its optional peers too),
 * nothing else: a name it does not have gets npm's 404, and every name asked for is kept in `requested`, so a test
 * can show what was needed.
 */
export interface PackageRegistry {
  url: string;
  requested: Set<string>;
  close(): Promise<void>;
}

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [field: string]: unknown;
}

interface Installed {
  dir: string;
  manifest: Manifest;
  tarball?: Buffer;
}

/** The directory of `name` as Node would find it from `fromDir` (the nearest node_modules upwards). */
function installedDirOf(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return realpathSync(candidate);
    if (dirname(dir) === dir) return undefined;
  }
}

function closureOf(roots: { dir: string; dependencies: string[] }[]): Map<string, Map<string, Installed>> {
  const packages = new Map<string, Map<string, Installed>>();
  const queue = roots.flatMap((root) => root.dependencies.map((name) => ({ name, from: root.dir })));
  const seen = new Set<string>();
  while (queue.length > 0) {
    const { name, from } = queue.pop()!;
    const dir = installedDirOf(name, from);
    // Not installed here (an optional dependency of another platform), or a package of this repository itself
    // (linked to its sources, not installed from a registry): not served.
    if (!dir || seen.has(dir) || !dir.includes(`${sep}node_modules${sep}`)) continue;
    seen.add(dir);
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
    const versions = packages.get(manifest.name) ?? new Map<string, Installed>();
    versions.set(manifest.version, { dir, manifest });
    packages.set(manifest.name, versions);
    const optionalPeers = new Set(
      Object.entries(manifest.peerDependenciesMeta ?? {})
        .filter(([, meta]) => meta.optional)
        .map(([peer]) => peer),
    );
    const next = [
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.optionalDependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}).filter((peer) => !optionalPeers.has(peer)),
    ];
    for (const dependency of next) queue.push({ name: dependency, from: dir });
  }
  return packages;
}

/**
 * The package directory as npm publishes it: a gzipped tar whose entries sit under `package/`. Hard links (the
 * package store links identical files) are written as files: npm skips link entries when it unpacks.
 */
function tarballOf(dir: string): Buffer {
  return execFileSync(
    "tar",
    [
      "-cz",
      "--hard-dereference",
      "--exclude=./node_modules",
      "--owner=0",
      "--group=0",
      "--transform=s,^\\.,package,",
      "-C",
      dir,
      ".",
    ],
    { maxBuffer: 256 * 1024 * 1024 },
  );
}

/** The manifest inside a packed tarball. */
export function manifestOf(tarball: string): Manifest {
  return JSON.parse(execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" })) as Manifest;
}

/**
 * `publish`: each tarball, and the workspace directory where its dependencies are installed. `beside`: packages of
 * other publishers that a text has the user install beside ours (a TypeScript runner, another protocol's client), each
 * served with its dependency closure as installed where Node finds it from `dir`.
 */
export async function startPackageRegistry(
  publish: { tarball: string; workspaceDir: string }[],
  beside: { dir: string; dependencies: string[] }[] = [],
): Promise<PackageRegistry> {
  const published = publish.map(({ tarball, workspaceDir }) => ({
    tarball,
    workspaceDir,
    manifest: manifestOf(tarball),
  }));
  const packages = closureOf([
    ...beside,
    ...published.map(({ workspaceDir, manifest }) => ({
      dir: workspaceDir,
      // A published package's optional peers too: its README has the user install them beside it.
      dependencies: Object.keys({
        ...manifest.dependencies,
        ...manifest.optionalDependencies,
        ...manifest.peerDependencies,
      }),
    })),
  ]);
  for (const { tarball, manifest } of published) {
    const versions = packages.get(manifest.name) ?? new Map<string, Installed>();
    versions.set(manifest.version, { dir: "", manifest, tarball: readFileSync(tarball) });
    packages.set(manifest.name, versions);
  }
  const requested = new Set<string>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://registry");
    const tarball = /^\/-\/(.+)\/(.+)\.tgz$/.exec(url.pathname);
    if (tarball) {
      const installed = packages.get(decodeURIComponent(tarball[1]!))?.get(tarball[2]!);
      if (!installed) return res.writeHead(404).end();
      installed.tarball ??= tarballOf(installed.dir);
      return res.writeHead(200, { "content-type": "application/octet-stream" }).end(installed.tarball);
    }
    const name = decodeURIComponent(url.pathname.slice(1));
    requested.add(name);
    const versions = packages.get(name);
    if (!versions) return res.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}');
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const packument = {
      name,
      "dist-tags": { latest: [...versions.keys()].at(-1) },
      versions: Object.fromEntries(
        [...versions].map(([version, installed]) => {
          installed.tarball ??= tarballOf(installed.dir);
          const dist = {
            tarball: `${origin}/-/${encodeURIComponent(name)}/${version}.tgz`,
            shasum: createHash("sha1").update(installed.tarball).digest("hex"),
            integrity: `sha512-${createHash("sha512").update(installed.tarball).digest("base64")}`,
          };
          return [version, { ...installed.manifest, _id: `${name}@${version}`, dist }];
        }),
      ),
    };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packument));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requested,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
