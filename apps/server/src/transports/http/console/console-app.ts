/**
 * The operator console in the browser (served at /operator by transports/http/routes/operator-console.ts, built by
 * tsup.console.config.ts). It opens an hour's session with a Sign-In-With-X made by the operator's wallet here or
 * carried in a one-time link (`/operator#sign-in=<SIGN-IN-WITH-X>`), then draws what `GET /operator/overview` says
 * (docs/decisions.md, "The operator's book").
 */
import type { LedgerEntry, OperatorOverview, OperatorSessionState } from "@agent-tools/schema";
import { createSIWxPayload, encodeSIWxHeader } from "@x402/extensions/sign-in-with-x";

interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

// The routes the page talks to (packages/schema/src/operator.ts names them; the page carries no schema code).
const SESSION_PATH = "/operator/session";
const OVERVIEW_PATH = "/operator/overview";
const EXPORT_PATH = "/operator/ledger/export";
const STATEMENT = "Sign in as the operator to read the settlement ledger.";
/** The fragment of a console link (OPERATOR_LINK_FRAGMENT in the schema). */
const LINK_FRAGMENT = /^#sign-in=(.+)$/;
const LINK_COMMAND = "agent-tools console --key-file operator.key";

const byId = (id: string) => document.getElementById(id) as HTMLElement;
const setStatus = (text: string) => {
  byId("status").textContent = text;
};

/** A text node's worth of HTML, escaped. */
const html = (text: string | number) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** Units as USD to the cent, and to the last unit when there is more (a charge by the work done: 0.012). */
const usd = (units: string | number) => {
  const text = (Number(units) / 1e6).toFixed(6).replace(/0+$/, "");
  const [whole, cents = ""] = text.split(".");
  return `${whole}.${cents.padEnd(2, "0")}`;
};
const short = (hex: string) => `${hex.slice(0, 6)}…${hex.slice(-4)}`;

function utf8Hex(text: string): string {
  return `0x${Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

function freshNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

interface ErrorBody {
  error?: { message?: string; details?: { message?: string }[] };
}

async function errorOf(res: Response): Promise<string> {
  const body = (await res.json().catch(() => undefined)) as ErrorBody | undefined;
  return body?.error?.message ?? `The service answered ${res.status}.`;
}

/**
 * The sign-in a console link carries, taken out of the address bar before anything else happens, so that the page's
 * address as shown, shared or bookmarked no longer holds it.
 */
function takeLinkSignIn(): string | undefined {
  const match = LINK_FRAGMENT.exec(location.hash);
  if (!match) return undefined;
  history.replaceState(null, "", `${location.pathname}${location.search}`);
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return match[1];
  }
}
const linkSignIn = takeLinkSignIn();

/** The session and how to open one (GET /operator/session, answered 200 signed in or not). */
let state: OperatorSessionState | undefined;
async function loadState(): Promise<OperatorSessionState> {
  const res = await fetch(SESSION_PATH, { headers: { accept: "application/json" } });
  if (!res.ok) throw new Error(await errorOf(res));
  state = (await res.json()) as OperatorSessionState;
  return state;
}

/** What to tell the operator when the service refuses a sign-in to open a session. */
async function refusalOf(res: Response, from: "wallet" | "link", current: OperatorSessionState): Promise<string> {
  const body = (await res.json().catch(() => undefined)) as ErrorBody | undefined;
  const message = body?.error?.message ?? `The service answered ${res.status}.`;
  if (from === "wallet") return message;
  if (res.status === 403) return `${message} Make the link with the operator's key: ${LINK_COMMAND}`;
  if (res.status !== 401) return message;
  // The service's reasons: a nonce already claimed (operator-auth.ts), a message past its age (verify-sign-in.ts).
  const reasons = `${message} ${(body?.error?.details ?? []).map((d) => d.message ?? "").join(" ")}`;
  const minutes = Math.round(current.signIn.maxAgeSeconds / 60);
  const again = `Run ${LINK_COMMAND} again for a new link.`;
  if (/already used/i.test(reasons)) return `This sign-in link was already used: a link signs in once. ${again}`;
  if (/too_old|expired/i.test(reasons)) {
    return `This sign-in link has expired: a link is valid for ${minutes} minutes after it is made. ${again}`;
  }
  return `This sign-in link was refused: ${message} ${again}`;
}

/** Opens a session with a SIGN-IN-WITH-X; true when open, else the refusal is on the page. */
async function openSession(header: string, from: "wallet" | "link"): Promise<boolean> {
  const res = await fetch(SESSION_PATH, { method: "POST", headers: { "SIGN-IN-WITH-X": header } });
  if (res.ok) return true;
  const current = state ?? (await loadState());
  setStatus(await refusalOf(res, from, current));
  return false;
}

/** Signs in with the wallet: signs the service's sign-in message for the chain it takes, opens a session. */
async function signIn(): Promise<void> {
  const wallet = (window as unknown as { ethereum?: Eip1193Provider }).ethereum;
  if (!wallet) {
    setStatus(
      "No wallet in this browser (an Ethereum wallet, EIP-1193). Sign in with a link instead: run " +
        `${LINK_COMMAND} where the operator's key is kept, and open the link it prints.`,
    );
    return;
  }
  setStatus("Waiting for your wallet…");
  const [address] = (await wallet.request({ method: "eth_requestAccounts" })) as string[];
  if (!address) throw new Error("The wallet shared no account.");
  const { origin, chains } = (state ?? (await loadState())).signIn;
  const chainId = chains.find((chain) => chain.startsWith("eip155:"));
  if (!chainId) throw new Error("The service names no Ethereum chain to sign in on.");
  const url = `${origin}${SESSION_PATH}`;
  const payload = await createSIWxPayload(
    {
      domain: new URL(origin).host,
      uri: url,
      version: "1",
      statement: STATEMENT,
      nonce: freshNonce(),
      issuedAt: new Date().toISOString(),
      chainId,
      type: "eip191",
      resources: [url],
    },
    {
      address: address as `0x${string}`,
      signMessage: async ({ message }: { message: string }) =>
        (await wallet.request({ method: "personal_sign", params: [utf8Hex(message), address] })) as `0x${string}`,
    } as never,
    url,
  );
  if (!(await openSession(encodeSIWxHeader(payload), "wallet"))) return;
  setStatus("");
  await show();
}

/** A round top for a chart's axis, at least `value`: 1, 2, 2.5 or 5 times a power of ten ($1 when all is 0). */
function axisTop(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 2.5, 5, 10].find((f) => f * power >= value * (1 - 1e-9))! * power;
}

/** A dollar amount on an axis: cents, or the decimals it needs (up to four). */
function dollars(value: number): string {
  let digits = 2;
  while (digits < 4 && Math.abs(value * 10 ** digits - Math.round(value * 10 ** digits)) > 1e-9) digits += 1;
  return `$${value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })}`;
}

/**
 * Bars of one series, as SVG: vertical, over a dollar axis with a label under every fifth; or horizontal, each with
 * its label before it and its amount after it.
 */
function bars(points: { label: string; value: number }[], horizontal: boolean, name: string): string {
  const max = Math.max(...points.map((p) => p.value), 0.01);
  if (horizontal) {
    const rows = points
      .map((p, i) => {
        const w = (p.value / max) * 220;
        return `<text x="0" y="${i * 22 + 14}">${html(p.label)}</text><rect class="bar" x="110" y="${i * 22 + 3}" width="${w.toFixed(1)}" height="14"><title>${html(p.label)}: $${p.value.toFixed(2)}</title></rect><text x="${(114 + w).toFixed(1)}" y="${i * 22 + 14}">$${p.value.toFixed(2)}</text>`;
      })
      .join("");
    return `<svg data-chart="${name}" viewBox="0 0 380 ${Math.max(points.length * 22, 22)}" role="img">${rows}</svg>`;
  }
  // One column per point, a label under every fifth (and the last), whatever the number of days; dollar amounts at
  // 0, half and the top of the axis, with a gridline each, so that a bar reads without hovering it.
  const step = 12;
  const base = 108;
  const top = axisTop(Math.max(...points.map((p) => p.value), 0));
  // Room for the longest amount on the left, at the larger font of a narrow screen.
  const left = 12 + dollars(top).length * 7;
  const width = left + points.length * step + 24;
  const y = (value: number) => (base - (value / top) * 100).toFixed(1);
  const axis = [0, top / 2, top]
    .map(
      (value) =>
        `<line class="grid" x1="${left}" x2="${width - 16}" y1="${y(value)}" y2="${y(value)}"/>` +
        `<text class="axis" x="${left - 4}" y="${(Number(y(value)) + 3).toFixed(1)}" text-anchor="end">${html(dollars(value))}</text>`,
    )
    .join("");
  const cols = points
    .map((p, i) => {
      const h = (p.value / top) * 100;
      const label =
        i % 5 === 0 || i === points.length - 1
          ? `<text x="${left + i * step}" y="124">${html(p.label.slice(5))}</text>`
          : "";
      return `<rect class="bar" x="${left + i * step + 2}" y="${(base - h).toFixed(1)}" width="${step - 4}" height="${h.toFixed(1)}"><title>${html(p.label)}: $${p.value.toFixed(2)}</title></rect>${label}`;
    })
    .join("");
  return `<svg data-chart="${name}" viewBox="0 0 ${width} 130" role="img">${axis}${cols}</svg>`;
}

function table(head: string[], rows: string[][], name: string): string {
  return `<div class="scroll"><table data-table="${name}"><thead><tr>${head.map((h) => `<th>${html(h)}</th>`).join("")}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`)
    .join("")}</tbody></table></div>`;
}

/** What a call charged by its work took, as its amount's title says it. */
const workTitle = (work: NonNullable<LedgerEntry["work"]>) =>
  `charged by the work done: ${work.upstreamReads} upstream reads, ${work.itemsExamined} items examined, ` +
  `${work.blocksScanned} blocks scanned`;

function paymentRow(entry: LedgerEntry, transactionUrl: string | null): string[] {
  // A call paid over a channel is booked under the claim that takes its money: none yet until the claim pass. Its
  // voucher's cumulative amount (the channel's charged total once this call was charged) is given in its title.
  const charged =
    entry.cumulative === null ? "" : `; the channel's charged total with this call: $${usd(entry.cumulative)}`;
  const tx = !entry.transaction
    ? `<span title="paid over a channel: its transaction is the claim that takes its money${html(charged)}">channel, not yet claimed</span>`
    : transactionUrl
      ? `<a href="${html(transactionUrl.replace("{hash}", entry.transaction))}" rel="noreferrer" target="_blank">${short(entry.transaction)}</a>`
      : `<span title="${html(entry.transaction)}">${short(entry.transaction)}</span>`;
  return [
    html(entry.settledAt.replace("T", " ").slice(0, 19)),
    html(`${entry.method} ${entry.route}`),
    `<span title="${html(entry.payer)}">${short(entry.payer)}</span>`,
    html(entry.kind === "refund" ? `refund${entry.note ? `: ${entry.note}` : ""}` : entry.pricePoint),
    `${entry.kind === "refund" ? "-" : ""}$${usd(entry.amount)}${
      entry.kind === "payment" && entry.work
        ? ` <span title="${html(workTitle(entry.work))}">of $${usd(entry.ceiling)}</span>`
        : ""
    }`,
    `<span data-transaction="${html(entry.transaction)}">${tx}</span>`,
  ];
}

/** What a total kept, in USD, for a bar: net of refunds, and no bar below zero. */
const kept = (total: { netUsd: string }) => Math.max(0, Number(total.netUsd));

/** Every day of the report's window, oldest first, with the USD kept on it (0 on a day without payments). */
function daysOf(report: OperatorOverview["report"]): { label: string; value: number }[] {
  const settled = new Map(report.byDay.map((d) => [d.day, kept(d)]));
  const days: { label: string; value: number }[] = [];
  for (let at = Date.parse(`${report.from}T00:00:00Z`); at <= Date.parse(`${report.to}T00:00:00Z`); at += 86_400_000) {
    const day = new Date(at).toISOString().slice(0, 10);
    days.push({ label: day, value: settled.get(day) ?? 0 });
  }
  return days;
}

/** The money on the payment channels since they were opened (docs/channels.md, "What the operator sees"). */
function channelsSection(channels: NonNullable<OperatorOverview["report"]["channels"]>): string {
  const owed = Number(channels.unclaimed.amount) > 0;
  return `<section><h2>Payment channels</h2>${table(
    ["", "USD"],
    [
      ["channels", String(channels.channels)],
      ["deposited by payers", html(channels.deposited.usd)],
      ["charged for answered calls", html(channels.charged.usd)],
      ["claimed on chain", html(channels.claimed.usd)],
      ["swept to the payee", html(channels.swept.usd)],
      ["refunded to payers", html(channels.refunded.usd)],
      [
        "charged, not yet claimed",
        owed ? `<span class="warn">${html(channels.unclaimed.usd)}</span>` : html(channels.unclaimed.usd),
      ],
    ],
    "channels",
  )}</section>`;
}

function render(overview: OperatorOverview): string {
  const { report, pending, missions, upstreams, refusals, transactionUrl } = overview;
  const window = `from=${report.from}&to=${report.to}`;
  const queued = missions.queued ?? 0;
  return `
<p>${html(report.brief)}</p>
<div class="cards">
  <div class="card">Revenue, <span class="nowrap">${html(report.from)}</span> to <span class="nowrap">${html(report.to)}</span><b data-card="revenue">$${html(report.total.netUsd)}</b>${report.total.refunds > 0 ? `<span>$${html(report.total.usd)} paid, $${usd(report.total.refunded)} refunded</span>` : "net of refunds"}</div>
  <div class="card">Payments<b data-card="payments">${report.total.payments}</b></div>
  <div class="card">Pending claims<b data-card="pending" class="${pending.older > 0 ? "warn" : ""}">${pending.recent + pending.older}</b>${pending.older > 0 ? `<span class="warn">${pending.older} unresolved for over 10 minutes</span>` : "none stuck"}</div>
  <div class="card">Missions queued<b data-card="missions">${queued}</b></div>
</div>
<div class="grid">
  <section><h2>Revenue per day (USD)</h2>${bars(daysOf(report), false, "by-day")}</section>
  <section><h2>Revenue per tool (USD)</h2>${bars(
    report.byRoute.map((r) => ({ label: r.route, value: kept(r) })),
    true,
    "by-route",
  )}</section>
</div>
<h2>Latest payments and refunds</h2>
${table(
  ["settled (UTC)", "call", "payer", "price or refund", "USD", "transaction"],
  report.entries.map((e) => paymentRow(e, transactionUrl)),
  "payments",
)}
<p><a class="button" data-export="csv" href="${EXPORT_PATH}?${window}&format=csv" download>Export CSV</a>
   <a class="button" data-export="jsonl" href="${EXPORT_PATH}?${window}&format=jsonl" download>Export JSON Lines</a></p>
<div class="grid">
  <section><h2>Mission queue</h2>${table(
    ["status", "missions"],
    Object.entries(missions).map(([s, n]) => [html(s), String(n)]),
    "missions",
  )}</section>
  <section><h2>Upstreams</h2>${table(
    ["upstream", "circuit", "budget a minute"],
    upstreams.map((u) => [
      html(u.name),
      u.circuitOpen ? '<span class="warn">open: calls refused</span>' : "closed",
      u.budgetPerMinute === null ? "none" : String(u.budgetPerMinute),
    ]),
    "upstreams",
  )}</section>
  <section><h2>Refusals by reason</h2>${
    Object.keys(refusals).length === 0
      ? "<p>No paid call refused since this instance started.</p>"
      : table(
          ["reason", "since start"],
          Object.entries(refusals).map(([r, n]) => [html(r), String(n)]),
          "refusals",
        )
  }</section>
  ${report.channels ? channelsSection(report.channels) : ""}
  <section><h2>Settlement</h2>${table(
    ["", ""],
    [
      ["claims of calls running", String(pending.recent)],
      ["claims unresolved over 10 min", String(pending.older)],
      ["settlements sent, unconfirmed", String(report.unconfirmed)],
      ["network", html(report.network)],
    ],
    "settlement",
  )}</section>
</div>`;
}

/** Shows the sign-in. */
function signedOut(): void {
  byId("who").textContent = "";
  byId("console").hidden = true;
  byId("signin").hidden = false;
  document.body.dataset.ready = "signin";
}

/** Shows the console when the browser holds a session, or the sign-in when it does not. */
async function show(known?: OperatorSessionState): Promise<void> {
  const { session } = known ?? (await loadState());
  if (!session) return signedOut();
  const res = await fetch(OVERVIEW_PATH);
  // The session ended between the two requests.
  if (res.status === 401) return signedOut();
  if (!res.ok) {
    setStatus(await errorOf(res));
    return;
  }
  const overview = (await res.json()) as OperatorOverview;
  byId("signin").hidden = true;
  const main = byId("console");
  main.innerHTML = render(overview);
  main.hidden = false;
  byId("who").innerHTML =
    `signed in as <span class="address" data-address>${html(session.address)}</span> ` +
    '<button id="signout" type="button">Sign out</button>';
  byId("signout").addEventListener("click", async () => {
    await fetch(SESSION_PATH, { method: "DELETE" });
    await show();
  });
  document.body.dataset.ready = "console";
}

/** Opens the session a link carries, then shows the console; a refused link is said, over the sign-in. */
async function signInWithLink(header: string): Promise<void> {
  if (await openSession(header, "link")) return show();
  await show(state);
}

const failed = (error: unknown) => setStatus(error instanceof Error ? error.message : String(error));
byId("connect").addEventListener("click", () => {
  signIn().catch(failed);
});
(linkSignIn ? signInWithLink(linkSignIn) : show()).catch(failed).finally(() => {
  document.body.dataset.ready ??= "signin";
});
