/**
 * nginx (Debian's package, `npm run setup -- --with-nginx`) as the load balancer in front of the instances, started
 * in the foreground from a configuration of its own in a temp directory, on loopback ports of its own.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitForOutput } from "../src/startup/embedded-process.js";

const NGINX = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((path) => existsSync(path));

export function hasNginx(): boolean {
  return NGINX !== undefined;
}

export interface LoadBalancer {
  /** One origin per site, in the order given. */
  urls: string[];
  /** What nginx logged (its error log, at notice level). */
  output(): string;
  close(): Promise<void>;
}

/** A site: a port of the proxy, balanced round robin over `upstreams` (origins `http://127.0.0.1:<port>`). */
export interface Site {
  upstreams: string[];
}

function config(dir: string, sites: { port: number; upstreams: string[] }[]): string {
  const upstreams = sites.map(
    (site, i) => `
  upstream site${i} {
${site.upstreams.map((origin) => `    server ${new URL(origin).host} max_fails=1 fail_timeout=2s;`).join("\n")}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${site.port};
    # x402's clients send the 402's extensions back in PAYMENT-SIGNATURE (base64): 8 to 10 KB with the Bazaar
    # schemas and a signed offer per scheme, over nginx's default of 8 KB for one header line.
    large_client_header_buffers 4 16k;
    location / {
      proxy_pass http://site${i};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_read_timeout 120s;
      # A 402's PAYMENT-REQUIRED header (x402's payment terms with the Bazaar schemas, base64) is 4 to 7 KB:
      # more than nginx's default header buffer of one page.
      proxy_buffer_size 16k;
      proxy_buffers 8 16k;
    }
  }`,
  );
  // As a user would run it in front of the service, with what a test needs on top: the foreground, the log on
  // stderr, every file in the temp directory.
  return `daemon off;
worker_processes 2;
pid ${join(dir, "nginx.pid")};
error_log stderr notice;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${join(dir, "body")};
  proxy_temp_path ${join(dir, "proxy")};
  fastcgi_temp_path ${join(dir, "fastcgi")};
  uwsgi_temp_path ${join(dir, "uwsgi")};
  scgi_temp_path ${join(dir, "scgi")};
  keepalive_timeout 65s;
${upstreams.join("\n")}
}
`;
}

export async function startNginx(sites: Site[]): Promise<LoadBalancer> {
  if (!NGINX) throw new Error("nginx is not installed (npm run setup -- --with-nginx)");
  const dir = mkdtempSync(join(tmpdir(), "agent-tools-nginx-"));
  // Run as root, nginx's workers are `nobody`: they reach their temp paths through this directory.
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, "logs"));
  // A port found free may be taken before nginx binds it: then start again on others.
  for (let attempt = 0; ; attempt++) {
    const placed = await Promise.all(sites.map(async (site) => ({ ...site, port: await freePort() })));
    const file = join(dir, "nginx.conf");
    writeFileSync(file, config(dir, placed));
    execFileSync(NGINX, ["-t", "-q", "-p", dir, "-c", file, "-e", "stderr"], { stdio: "pipe" });
    const child: ChildProcess = spawn(NGINX, ["-p", dir, "-c", file, "-e", "stderr"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let text = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      text += chunk;
    });
    const killChild = () => child.kill("SIGKILL");
    process.once("exit", killChild);
    child.once("exit", () => process.off("exit", killChild));
    try {
      // The master binds every port before it starts its workers.
      await waitForOutput({ child, output: () => text }, /start worker process/, 30_000, "nginx");
    } catch (error) {
      if (attempt < 3 && /Address already in use/.test(text)) continue;
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    return {
      urls: placed.map((site) => `http://127.0.0.1:${site.port}`),
      output: () => text,
      async close() {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = once(child, "exit");
          child.kill("SIGQUIT"); // graceful: workers finish what they serve
          await exited;
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}
