/**
 * The paid tools as A2A skills, through `@a2a-js/sdk`'s own client (A2A 1.0, JSON-RPC), paid with x402's own client.
 * The payment's metadata is read and written with the names x402's A2A extension gives them (`x402.payment.*`, as
 * its reference implementation `a2a-x402` declares them), and its `PaymentRequired` checked with x402's schema, not
 * with the service's constants.
 */

import { type Message, SendMessageRequest, Task, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from "@a2a-js/sdk/client";
import { ledgerReportSchema, meteredCharge } from "@agent-tools/schema";
import { PaymentRequiredV2Schema } from "@x402/core/schemas";
import type { PaymentRequired } from "@x402/core/types";
import { computeChannelId, signVoucher } from "@x402/evm/batch-settlement/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createA2aTaskStore } from "../src/store/a2a-tasks.js";
import { createPortfolioTool } from "../src/tools/portfolio.js";
import type { Tool } from "../src/tools/types.js";
import { type PaidTestServer, PUBLIC_URL, startPaidTestServer } from "./helpers/paid-server.js";
import { rawPost } from "./helpers/raw-post.js";
import { x402ChannelPayer } from "./helpers/x402-payer.js";

/** x402's A2A extension, in the two versions of its text (google-agentic-commerce/a2a-x402 `spec/v0.1`, `spec/v0.2`). */
const X402_EXTENSION = "https://github.com/google-a2a/a2a-x402/v0.1";
const X402_EXTENSION_V02 = "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2";
const STATUS = "x402.payment.status";
const REQUIRED = "x402.payment.required";
const PAYLOAD = "x402.payment.payload";
const RECEIPTS = "x402.payment.receipts";
const ERROR = "x402.payment.error";

let t: PaidTestServer;
let client: Client;

/**
 * The portfolio skill, held at a gate while a test needs a paid call that is running: `entered` resolves once a call
 * reached the tool, and the call goes on (to the real tool) when `open` is called.
 */
const portfolioGate = (() => {
  let real: Tool<"portfolio"> | undefined;
  let closed: { entered: () => void; opened: Promise<void> } | undefined;
  return {
    tool: (async (params, context) => {
      if (closed) {
        closed.entered();
        await closed.opened;
      }
      return real!(params, context);
    }) as Tool<"portfolio">,
    useReal(tool: Tool<"portfolio">) {
      real = tool;
    },
    /** Holds the next calls at the gate until `open`. */
    close(): { entered: Promise<void>; open: () => void } {
      let entered = () => {};
      let open = () => {};
      const reached = new Promise<void>((resolve) => {
        entered = resolve;
      });
      const opened = new Promise<void>((resolve) => {
        open = () => {
          closed = undefined;
          resolve();
        };
      });
      closed = { entered, opened };
      return { entered: reached, open };
    },
  };
})();
/** What a client that declares x402's extension sends with each call. */
let x402: { serviceParameters: Record<string, string> };

/** A client of the agent whose calls reach `origin` (the card names the public URL, as behind a proxy). */
function clientOf(origin: () => string): Promise<Client> {
  const toServer: typeof fetch = (input, init) =>
    fetch(String(input instanceof Request ? input.url : input).replace(PUBLIC_URL, origin()), init);
  return new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: toServer })] }).createFromUrl(
    origin(),
  );
}

beforeAll(async () => {
  t = await startPaidTestServer({ tools: { portfolio: portfolioGate.tool } });
  portfolioGate.useReal(createPortfolioTool(t.toolDeps));
  client = await clientOf(() => t.server.url);
  x402 = { serviceParameters: ServiceParameters.create(withA2AExtensions(X402_EXTENSION)) };
}, 120_000);

afterAll(async () => {
  await t?.close();
});

/** A user message, written in A2A's JSON form. */
function message(fields: { data?: unknown; taskId?: string; metadata?: Record<string, unknown> }) {
  return SendMessageRequest.fromJSON({
    message: {
      messageId: crypto.randomUUID(),
      role: "ROLE_USER",
      parts: fields.data === undefined ? [{ text: "hello" }] : [{ data: fields.data }],
      ...(fields.taskId ? { taskId: fields.taskId } : {}),
      ...(fields.metadata ? { metadata: fields.metadata } : {}),
    },
  });
}

async function send(
  fields: Parameters<typeof message>[0],
  through: Client = client,
  extensions: typeof x402 = x402,
): Promise<Task> {
  const result = await through.sendMessage(message(fields), extensions);
  expect(result, "the agent answers with a task").toHaveProperty("status");
  return result as Task;
}

function statusOf(task: Task): { state: TaskState; message: Message; metadata: Record<string, unknown> } {
  const message = task.status!.message!;
  return { state: task.status!.state, message, metadata: message.metadata ?? {} };
}

function dataOf(parts: Message["parts"]): unknown {
  return parts.find((part) => part.content?.$case === "data")?.content?.value;
}

/** The x402 `PaymentRequired` of a task waiting for payment. */
function requiredOf(task: Task): PaymentRequired {
  const { state, metadata } = statusOf(task);
  expect(state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  expect(metadata[STATUS]).toBe("payment-required");
  return PaymentRequiredV2Schema.parse(metadata[REQUIRED]) as PaymentRequired;
}

async function paymentPayload(index: number, paymentRequired: PaymentRequired): Promise<Record<string, unknown>> {
  return JSON.parse(Buffer.from(await t.pay(index, paymentRequired), "base64").toString("utf8"));
}

describe("the A2A agent", () => {
  it("has a card A2A clients read: a skill per paid tool with its prices, x402's extension in both versions", async () => {
    const card = await client.getAgentCard();
    expect(card.supportedInterfaces[0]).toMatchObject({ url: `${PUBLIC_URL}/a2a`, protocolBinding: "JSONRPC" });
    expect(card.skills.map((skill) => skill.id)).toEqual(
      expect.arrayContaining(["intel", "drop_radar", "b20_radar", "portfolio", "allowlist_scan", "dispatch"]),
    );
    const intel = card.skills.find((skill) => skill.id === "intel")!;
    expect(intel.description).toMatch(/1\.00 USD a call, 0\.01 USD for any holder/);
    // Either version serves; marked required on both, a client would have to activate both.
    expect(card.capabilities!.extensions.map((e) => e.uri)).toEqual([X402_EXTENSION, X402_EXTENSION_V02]);
    for (const extension of card.capabilities!.extensions) {
      expect(extension.required).toBe(false);
      expect(extension.params).toMatchObject({
        network: t.config.payment.network,
        asset: t.config.payment.asset,
        payTo: t.config.payment.payTo,
        prices: { intel: { standard: "1000000", discounted: "10000" } },
      });
    }
  });

  it("is listed in the ERC-8004 registration file beside MCP, by its agent card", async () => {
    const registration = (await (await t.get("/.well-known/agents/1.json")).json()) as {
      services: { name: string; endpoint: string }[];
    };
    expect(registration.services).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "MCP" }),
        expect.objectContaining({ name: "A2A", endpoint: `${PUBLIC_URL}/.well-known/agent-card.json` }),
      ]),
    );
  });

  it("tells a client that does not declare x402's extension that it must, naming both versions, and serves it nothing", async () => {
    const refused = client.sendMessage(message({ data: { skill: "intel", input: { tokenId: 4 } } }));
    await expect(refused).rejects.toThrow(/extension/i);
    await expect(refused).rejects.toThrow(X402_EXTENSION_V02);
  });

  it.each([
    ["0.1", X402_EXTENSION],
    ["0.2", X402_EXTENSION_V02],
  ])(
    "serves a client that activates version %s alone, and says so in the answer's A2A-Extensions header",
    async (_, uri) => {
      const res = await fetch(`${t.server.url}/a2a`, {
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": "1.0", "a2a-extensions": uri },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "SendMessage",
          params: {
            message: {
              messageId: crypto.randomUUID(),
              role: "ROLE_USER",
              parts: [{ data: { skill: "intel", input: { tokenId: 2 } } }],
            },
          },
        }),
      });
      expect(res.headers.get("a2a-extensions")).toBe(uri);
      const { result } = (await res.json()) as { result: { task: unknown } };
      requiredOf(Task.fromJSON(result.task));
    },
  );

  it("runs the whole paid flow for a client of version 0.2 (@a2a-js/sdk), as for 0.1", async () => {
    const v02 = { serviceParameters: ServiceParameters.create(withA2AExtensions(X402_EXTENSION_V02)) };
    const waiting = await send({ data: { skill: "intel", input: { tokenId: 5 } } }, client, v02);
    const required = requiredOf(waiting);
    const payer = t.devnet.deployment.accounts[4]!.address;
    const before = await t.balance(payer);
    const done = await send(
      { taskId: waiting.id, metadata: { [STATUS]: "payment-submitted", [PAYLOAD]: await paymentPayload(4, required) } },
      client,
      v02,
    );
    expect(statusOf(done).state, JSON.stringify(done.status)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(statusOf(done).metadata[STATUS]).toBe("payment-completed");
    expect(dataOf(done.artifacts[0]!.parts)).toMatchObject({ tokenId: 5 });
    expect(before - (await t.balance(payer))).toBe(BigInt(required.accepts[0]!.amount));
  });

  it("runs a skill paid by a channel's voucher: the receipt carries the channel's charged total, charged once", async () => {
    // The channel is opened over HTTP by x402's own channel client; its next voucher pays an A2A task.
    const account = privateKeyToAccount(t.devnet.deployment.accounts[6]!.privateKey);
    const network = `eip155:${t.devnet.l2.chainId}` as const;
    const { signer, scheme, post } = x402ChannelPayer({
      account,
      chain: t.devnet.l2.publicClient,
      network,
      asset: t.devnet.deployment.addresses.usdToken,
      options: { salt: `0x${"a2".repeat(32)}` },
    });
    const opened = await post(`${t.server.url}/intel`, { tokenId: 1 });
    expect(opened.status).toBe(200);

    const waiting = await send({ data: { skill: "intel", input: { tokenId: 4 } } });
    const required = requiredOf(waiting);
    const accept = required.accepts.find((a) => a.scheme === "batch-settlement")!;
    const price = BigInt(accept.amount);
    const config = scheme.buildChannelConfig(accept);
    const channelId = computeChannelId(config, network);
    // One call charged by its work (one agent examined); the voucher signs that and this call's price on top.
    const charge = meteredCharge({ upstreamReads: 0, itemsExamined: 1, blocksScanned: 0 }, price);
    const voucher = await signVoucher(signer, channelId, (charge + price).toString(), network);
    const payment = {
      x402Version: 2,
      accepted: accept,
      resource: required.resource,
      payload: { type: "voucher", channelConfig: config, voucher },
    };
    const done = await send({ taskId: waiting.id, metadata: { [STATUS]: "payment-submitted", [PAYLOAD]: payment } });
    const { state, metadata } = statusOf(done);
    expect(state, JSON.stringify(done.status)).toBe(TaskState.TASK_STATE_COMPLETED);
    const [receipt] = metadata[RECEIPTS] as Record<string, unknown>[];
    expect(receipt).toMatchObject({
      success: true,
      extra: {
        chargedAmount: charge.toString(),
        channelState: { channelId, chargedCumulativeAmount: (2n * charge).toString() },
      },
    });
    expect(dataOf(done.artifacts[0]!.parts)).toMatchObject({ tokenId: 4 });

    // The same voucher on a new task is refused: the channel was charged once, as an A2A call.
    const again = await send({ data: { skill: "intel", input: { tokenId: 4 } } });
    const refused = await send({ taskId: again.id, metadata: { [STATUS]: "payment-submitted", [PAYLOAD]: payment } });
    expect(statusOf(refused).metadata[STATUS]).not.toBe("payment-completed");
    const rows = await t.db.query<{ method: string }>(
      "SELECT method FROM settlements WHERE channel_id = $1 AND cumulative = $2",
      [channelId.toLowerCase(), (2n * charge).toString()],
    );
    expect(rows).toEqual([{ method: "A2A" }]);
  });

  it("asks for payment, then runs the skill paid by the next message: the payer pays exactly the price", async () => {
    const waiting = await send({ data: { skill: "intel", input: { tokenId: 4 } } });
    const required = requiredOf(waiting);
    expect(required.resource.url).toBe("a2a://skill/intel");
    const payer = t.devnet.deployment.accounts[3]!.address;
    const before = await t.balance(payer);

    const done = await send({
      taskId: waiting.id,
      metadata: { [STATUS]: "payment-submitted", [PAYLOAD]: await paymentPayload(3, required) },
    });
    const { state, metadata } = statusOf(done);
    expect(state, JSON.stringify(done.status)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(metadata[STATUS]).toBe("payment-completed");
    const [receipt] = metadata[RECEIPTS] as { success: boolean; transaction: string; payer: string }[];
    expect(receipt).toMatchObject({ success: true, payer });
    expect(receipt!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const answer = dataOf(done.artifacts[0]!.parts) as { tokenId: number; brief: string };
    expect(answer).toMatchObject({ tokenId: 4 });
    expect(answer.brief.length).toBeGreaterThan(0);
    expect(before - (await t.balance(payer))).toBe(BigInt(required.accepts[0]!.amount));

    // The operator's ledger books it as an A2A call.
    const path = "/operator/ledger";
    const res = await t.get(path, { "SIGN-IN-WITH-X": await t.signIn(0, path) });
    const report = ledgerReportSchema.parse(await res.json());
    expect(report.entries.find((entry) => entry.transaction === receipt!.transaction)).toMatchObject({
      method: "A2A",
      route: "/intel",
      payer,
    });
  });

  it("names A2A's own metadata fields in a refusal, never HTTP's headers", async () => {
    const unpaid = requiredOf(await send({ data: { skill: "intel", input: { tokenId: 4 } } }));
    expect(unpaid.error).toBe(`payment_required: pay with x402 version 2 (the message's metadata "${PAYLOAD}").`);
    const badSignIn = requiredOf(
      await send({ data: { skill: "intel", input: { tokenId: 4 } }, metadata: { "sign-in-with-x": "not a sign-in" } }),
    );
    expect(badSignIn.error).toMatch(
      /^invalid_siwx: the message's metadata "sign-in-with-x" is not a valid sign-in payload/,
    );
    for (const refusal of [unpaid, badSignIn]) expect(refusal.error).not.toMatch(/PAYMENT-SIGNATURE|SIGN-IN-WITH-X/);
  });

  it("refuses a payment used before, on a task of its own too, and charges nothing", async () => {
    const required = requiredOf(await send({ data: { skill: "intel", input: { tokenId: 6 } } }));
    const payload = await paymentPayload(5, required);
    const payer = t.devnet.deployment.accounts[5]!.address;
    const first = await send({
      data: { skill: "intel", input: { tokenId: 6 } },
      metadata: { [STATUS]: "payment-submitted", [PAYLOAD]: payload },
    });
    expect(statusOf(first).state).toBe(TaskState.TASK_STATE_COMPLETED);
    const after = await t.balance(payer);

    const replayed = await send({
      data: { skill: "intel", input: { tokenId: 6 } },
      metadata: { [STATUS]: "payment-submitted", [PAYLOAD]: payload },
    });
    const { state, metadata } = statusOf(replayed);
    expect(state).toBe(TaskState.TASK_STATE_FAILED);
    expect(metadata[STATUS]).toBe("payment-failed");
    expect(metadata[ERROR]).toBe("payment_already_used");
    expect(metadata[RECEIPTS]).toEqual([expect.objectContaining({ success: false })]);
    expect(replayed.artifacts).toEqual([]);
    expect(await t.balance(payer)).toBe(after);
  });

  it("gives a holder signed in for /a2a the holder price, and takes that price", async () => {
    // Demo account #1 holds token 1; its Sign-In-With-X travels in the message's metadata, signed for the endpoint.
    const signIn = { "sign-in-with-x": await t.signIn(1, "/a2a") };
    const waiting = await send({ data: { skill: "intel", input: { tokenId: 1 } }, metadata: signIn });
    const required = requiredOf(waiting);
    expect(required.accepts[0]!.amount).toBe("10000");
    const payer = t.devnet.deployment.accounts[1]!.address;
    const before = await t.balance(payer);
    const done = await send({
      taskId: waiting.id,
      metadata: {
        "sign-in-with-x": await t.signIn(1, "/a2a"),
        [STATUS]: "payment-submitted",
        [PAYLOAD]: await paymentPayload(1, required),
      },
    });
    expect(statusOf(done).state, JSON.stringify(done.status)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(before - (await t.balance(payer))).toBe(10000n);
  });

  it("rejects an input no payment can make right, naming the field, before asking for payment", async () => {
    const invalid = await send({ data: { skill: "intel", input: { tokenId: 0 } } });
    expect(statusOf(invalid).state).toBe(TaskState.TASK_STATE_REJECTED);
    const body = dataOf(statusOf(invalid).message.parts) as { error: { code: string; details: { field: string }[] } };
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.details.map((d) => d.field)).toContain("tokenId");

    const unknown = await send({ data: { skill: "teleport", input: {} } });
    expect(statusOf(unknown).state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(dataOf(statusOf(unknown).message.parts)).toMatchObject({
      error: { code: "unknown_tool", details: [{ field: "skill" }] },
    });

    // A stock client's text message: told what to send, with the field named.
    const prose = await send({});
    expect(statusOf(prose).state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(statusOf(prose).message.metadata?.[STATUS]).toBeUndefined();
    const refusal = dataOf(statusOf(prose).message.parts) as { error: { message: string; details: unknown[] } };
    expect(refusal.error.details).toEqual([{ field: "message.parts", message: expect.stringMatching(/data part/) }]);
    expect(refusal.error.message).toMatch(/data part .*"skill".*"input"/);
    expect(refusal.error.message).toContain('{"skill": "intel", "input": {"tokenId": 1}}');

    const notAnObject = await send({ data: "intel please" });
    expect(dataOf(statusOf(notAnObject).message.parts)).toMatchObject({
      error: { code: "invalid_request", message: "The skill request is invalid: it must be an object." },
    });
  });

  it("takes the payment for a task on another instance sharing the store: the task was asked for on the first", async () => {
    const waiting = await send({ data: { skill: "intel", input: { tokenId: 7 } } });
    const required = requiredOf(waiting);
    const other = await t.instance(t.payments);
    try {
      const payer = t.devnet.deployment.accounts[7]!.address;
      const before = await t.balance(payer);
      const done = await send(
        {
          taskId: waiting.id,
          metadata: { [STATUS]: "payment-submitted", [PAYLOAD]: await paymentPayload(7, required) },
        },
        await clientOf(() => other.url),
      );
      expect(statusOf(done).state, JSON.stringify(done.status)).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(dataOf(done.artifacts[0]!.parts)).toMatchObject({ tokenId: 7 });
      expect(before - (await t.balance(payer))).toBe(BigInt(required.accepts[0]!.amount));
    } finally {
      await other.close();
    }
  });

  it("keeps of an unpaid message a small row, swept after a quarter of an hour; a paid task a day", async () => {
    const padding = "x".repeat(20_000);
    const waiting = await send({ data: { skill: "intel", input: { tokenId: 8 } }, metadata: { note: padding } });
    requiredOf(waiting);
    const [row] = await t.db.query<{ size: number }>(
      "SELECT octet_length(task::text) AS size FROM a2a_tasks WHERE id = $1",
      [waiting.id],
    );
    expect(row!.size).toBeLessThan(1000);

    const store = createA2aTaskStore(t.db);
    const later = (minutes: number) => new Date(Date.now() + minutes * 60_000);
    const ids = async () => (await t.db.query<{ id: string }>("SELECT id FROM a2a_tasks")).map((r) => r.id);
    const settled = await t.db.query<{ id: string }>("SELECT id FROM a2a_tasks WHERE NOT waiting");
    const paid = settled.map((r) => r.id);
    expect(paid.length).toBeGreaterThan(0);
    await store.sweep(later(14));
    expect(await ids()).toContain(waiting.id);
    await store.sweep(later(16));
    expect(await ids()).not.toContain(waiting.id);
    expect(await ids()).toEqual(expect.arrayContaining(paid));
    await store.sweep(later(24 * 60 + 1));
    expect(await ids()).toEqual([]);
  });

  it("cancels a task waiting for payment at once: GetTask shows it canceled, and its payment is refused uncharged", async () => {
    const waiting = await send({ data: { skill: "intel", input: { tokenId: 13 } } });
    const required = requiredOf(waiting);
    const canceled = await client.cancelTask({ id: waiting.id, tenant: "", metadata: {} }, x402);
    expect(canceled.status!.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await client.getTask({ id: waiting.id, tenant: "", historyLength: 0 }, x402)).status!.state).toBe(
      TaskState.TASK_STATE_CANCELED,
    );
    // A second cancel answers the same; the payment that comes late is refused, and nothing moves.
    expect((await client.cancelTask({ id: waiting.id, tenant: "", metadata: {} }, x402)).status!.state).toBe(
      TaskState.TASK_STATE_CANCELED,
    );
    const payer = t.devnet.deployment.accounts[4]!.address;
    const before = await t.balance(payer);
    await expect(
      send({
        taskId: waiting.id,
        metadata: { [STATUS]: "payment-submitted", [PAYLOAD]: await paymentPayload(4, required) },
      }),
    ).rejects.toThrow(/terminal state/);
    expect(await t.balance(payer)).toBe(before);
    await expect(client.cancelTask({ id: crypto.randomUUID(), tenant: "", metadata: {} }, x402)).rejects.toThrow(
      /no task/i,
    );
  });

  it("does not cancel a task whose paid call runs: the cancel is answered at once, the call finishes and is paid", async () => {
    const input = { tokenId: 14, walletAddress: t.devnet.deployment.accounts[5]!.address };
    const waiting = await send({ data: { skill: "portfolio", input } });
    const required = requiredOf(waiting);
    const payer = t.devnet.deployment.accounts[5]!.address;
    const before = await t.balance(payer);
    const gate = portfolioGate.close();
    const paying = send({
      taskId: waiting.id,
      metadata: { [STATUS]: "payment-submitted", [PAYLOAD]: await paymentPayload(5, required) },
    });
    try {
      await gate.entered;
      await expect(client.cancelTask({ id: waiting.id, tenant: "", metadata: {} }, x402)).rejects.toThrow(
        /cannot be canceled: its paid call is running/,
      );
      expect((await client.getTask({ id: waiting.id, tenant: "" }, x402)).status!.state).toBe(
        TaskState.TASK_STATE_WORKING,
      );
    } finally {
      gate.open();
    }
    const done = await paying;
    expect(statusOf(done).state, JSON.stringify(done.status)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await client.getTask({ id: waiting.id, tenant: "" }, x402)).status!.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );
    expect(before - (await t.balance(payer))).toBe(BigInt(required.accepts[0]!.amount));
  });

  it.each([
    ["another instance sharing the store", 15, true],
    ["the same instance", 17, false],
  ])(
    "takes one payment per task: a second payer on %s changes nothing, pays nothing, and does not end the first's call",
    async (_, tokenId, elsewhere) => {
      const input = { tokenId, walletAddress: t.devnet.deployment.accounts[6]!.address };
      const waiting = await send({ data: { skill: "portfolio", input } });
      const required = requiredOf(waiting);
      const [first, second] = [t.devnet.deployment.accounts[6]!.address, t.devnet.deployment.accounts[7]!.address];
      const [firstBefore, secondBefore] = [await t.balance(first), await t.balance(second)];
      const gate = portfolioGate.close();
      const paying = send({
        taskId: waiting.id,
        metadata: { [STATUS]: "payment-submitted", [PAYLOAD]: await paymentPayload(6, required) },
      });
      const other = elsewhere ? await t.instance(t.payments) : undefined;
      try {
        await gate.entered;
        const late = await send(
          {
            taskId: waiting.id,
            metadata: { [STATUS]: "payment-submitted", [PAYLOAD]: await paymentPayload(7, required) },
          },
          other ? await clientOf(() => other.url) : client,
        );
        expect(statusOf(late).state).toBe(TaskState.TASK_STATE_WORKING);
        expect((statusOf(late).message.parts[0]!.content as { value: string }).value).toMatch(/nothing was charged/);
      } finally {
        gate.open();
        await other?.close();
      }
      // The first payer gets its own answer, and the task keeps it.
      const done = await paying;
      expect(statusOf(done).state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(dataOf(done.artifacts[0]!.parts)).toMatchObject({ wallet: input.walletAddress });
      expect((await client.getTask({ id: waiting.id, tenant: "" }, x402)).status!.state).toBe(
        TaskState.TASK_STATE_COMPLETED,
      );
      expect(firstBefore - (await t.balance(first))).toBe(BigInt(required.accepts[0]!.amount));
      expect(await t.balance(second)).toBe(secondBefore);
    },
  );

  it("keeps a task as a cancel or a claim left it: a save of the task as read before does not put it back", async () => {
    const waiting = await send({ data: { skill: "intel", input: { tokenId: 16 } } });
    const store = createA2aTaskStore(t.db);
    const context = undefined as never;
    const read = (await store.load(waiting.id, context))!;
    const canceled = { ...read, status: { ...read.status!, state: TaskState.TASK_STATE_CANCELED } };
    expect(await store.replaceWaiting(canceled)).toBe(true);
    expect(await store.replaceWaiting(canceled)).toBe(false);
    await store.save(read, context);
    expect((await store.load(waiting.id, context))!.status!.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it.each([
    ["a Host of another site", { host: "evil.example.com" }],
    ["an Origin of another site", { origin: "http://evil.example.com" }],
  ])("refuses a request with %s (DNS rebinding): 403, nothing served", async (_, headers) => {
    const res = await rawPost(`${t.server.url}/a2a`, headers, {
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: {
        message: { messageId: "m1", role: "ROLE_USER", parts: [{ data: { skill: "intel", input: { tokenId: 1 } } }] },
      },
    });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: "forbidden_origin" } });
  });
});
