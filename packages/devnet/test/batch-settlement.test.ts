/**
 * x402's batch-settlement libraries (@x402/evm 2.27.0, unmodified) against our channel contracts on a served devnet:
 * the client signs deposits and vouchers, the facilitator verifies and submits deposit, claim, settle and refund;
 * amounts are read back from the chain. The contract's refusals and the timed withdrawal are driven directly.
 */
import { batchSettlementAbi, USD_TOKEN_NAME, USD_TOKEN_VERSION, usdTokenAbi } from "@agent-tools/contracts";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { toClientEvmSigner, toFacilitatorEvmSigner } from "@x402/evm";
import {
  BatchSettlementEvmScheme as BatchSettlementClient,
  computeChannelId,
  InMemoryClientChannelStorage,
  signVoucher,
  updateChannelFromSettle,
} from "@x402/evm/batch-settlement/client";
import { BatchSettlementEvmScheme as BatchSettlementFacilitator } from "@x402/evm/batch-settlement/facilitator";
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  type Hex,
  hashTypedData,
  http,
  type PublicClient,
  parseEventLogs,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BATCH_SETTLEMENT_ADDRESS,
  DEVNET_ACCOUNTS,
  DEVNET_ADDRESSES,
  DEVNET_L2_CHAIN_ID,
  devnetL2Chain,
  type RunningDevnet,
  startDevnet,
} from "../src/index.js";

const NETWORK = `eip155:${DEVNET_L2_CHAIN_ID}` as const;
const WITHDRAW_DELAY = 900;

const payerAccount = privateKeyToAccount(DEVNET_ACCOUNTS[3]!.privateKey);
const receiver = DEVNET_ACCOUNTS[4]!.address;
const receiverAccount = privateKeyToAccount(DEVNET_ACCOUNTS[4]!.privateKey);
const authorizerAccount = privateKeyToAccount(DEVNET_ACCOUNTS[5]!.privateKey);
const relayerAccount = privateKeyToAccount(DEVNET_ACCOUNTS[6]!.privateKey);
const strangerAccount = privateKeyToAccount(DEVNET_ACCOUNTS[7]!.privateKey);
const token = DEVNET_ADDRESSES.usdToken;

const requirements: PaymentRequirements = {
  scheme: "batch-settlement",
  network: NETWORK,
  asset: token,
  amount: "10000",
  payTo: receiver,
  maxTimeoutSeconds: 300,
  extra: {
    receiverAuthorizer: authorizerAccount.address,
    withdrawDelay: WITHDRAW_DELAY,
    name: USD_TOKEN_NAME,
    version: USD_TOKEN_VERSION,
  },
};

/** The channel config as x402 builds it (the contract's struct; `withdrawDelay` a number). */
interface ChannelConfig {
  payer: Address;
  payerAuthorizer: Address;
  receiver: Address;
  receiverAuthorizer: Address;
  token: Address;
  withdrawDelay: number;
  salt: Hex;
}

let devnet: RunningDevnet;
let publicClient: PublicClient;
let facilitator: BatchSettlementFacilitator;
let clientSigner: ReturnType<typeof toClientEvmSigner>;

function walletOf(account: ReturnType<typeof privateKeyToAccount>) {
  return createWalletClient({ account, chain: devnetL2Chain, transport: http(devnet.deployment.l2.rpcUrl) });
}

beforeAll(async () => {
  devnet = await startDevnet({ host: "127.0.0.1", l1Port: 0, l2Port: 0 });
  const transport = http(devnet.deployment.l2.rpcUrl);
  publicClient = createPublicClient({ chain: devnetL2Chain, transport });
  const relayer = walletOf(relayerAccount);
  facilitator = new BatchSettlementFacilitator(
    toFacilitatorEvmSigner({
      address: relayerAccount.address,
      readContract: (args) => publicClient.readContract(args as never),
      verifyTypedData: (args) => publicClient.verifyTypedData(args as never),
      writeContract: (args) => relayer.writeContract(args as never),
      sendTransaction: (args) => relayer.sendTransaction(args),
      waitForTransactionReceipt: (args) => publicClient.waitForTransactionReceipt(args),
      getCode: (args) => publicClient.getCode(args),
    }),
    authorizerAccount,
  );
  clientSigner = toClientEvmSigner(payerAccount, {
    readContract: (args) => publicClient.readContract(args as never),
  });
});

afterAll(async () => {
  await devnet?.close();
});

const envelope = (payload: Record<string, unknown>): PaymentPayload => ({
  x402Version: 2,
  accepted: requirements,
  payload,
});

const usdBalance = (owner: Address) =>
  publicClient.readContract({ address: token, abi: usdTokenAbi, functionName: "balanceOf", args: [owner] });

async function channel(channelId: Hex) {
  const [balance, totalClaimed] = await publicClient.readContract({
    address: BATCH_SETTLEMENT_ADDRESS,
    abi: batchSettlementAbi,
    functionName: "channels",
    args: [channelId],
  });
  return { balance, totalClaimed };
}

async function receiptOf(hash: string) {
  const receipt = await publicClient.waitForTransactionReceipt({ hash: hash as Hex });
  expect(receipt.status).toBe("success");
  return parseEventLogs({ abi: batchSettlementAbi, logs: receipt.logs });
}

/** The contract's custom error name of a refused call (simulated, so nothing is mined). */
async function refusal(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof BaseError) {
      const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
      if (reverted instanceof ContractFunctionRevertedError) return reverted.data?.errorName ?? reverted.reason;
    }
    throw error;
  }
  return undefined;
}

/** Deposits through x402's client and facilitator; returns the client, its storage and the channel. */
async function openChannel(salt: Hex) {
  const storage = new InMemoryClientChannelStorage();
  const client = new BatchSettlementClient(clientSigner, { storage, salt });
  const created = await client.createPaymentPayload(2, requirements);
  const payload = envelope(created.payload);
  expect(created.payload.type).toBe("deposit");
  const config = created.payload.channelConfig as ChannelConfig;
  const channelId = computeChannelId(config, NETWORK);
  const deposit = created.payload.deposit as { amount: string };

  const verified = await facilitator.verify(payload, requirements);
  expect(verified).toMatchObject({ isValid: true, payer: payerAccount.address });

  const before = await usdBalance(payerAccount.address);
  const settled = await facilitator.settle(payload, requirements);
  expect(settled).toMatchObject({ success: true, amount: deposit.amount });
  const events = await receiptOf(settled.transaction);
  expect(events.map((e) => e.eventName)).toEqual(["ChannelCreated", "Deposited"]);
  expect(await usdBalance(payerAccount.address)).toBe(before - BigInt(deposit.amount));
  // The server charged the full request price for the deposit's request.
  await updateChannelFromSettle(storage, {
    server: { chargedAmount: requirements.amount },
    local: { channelId, requestAmount: requirements.amount, depositAmount: deposit.amount },
  });
  return { client, storage, config, channelId, depositAmount: BigInt(deposit.amount) };
}

/** A paid request on an open channel: x402's client signs the next voucher, the facilitator verifies it. */
async function payRequest(
  opened: Awaited<ReturnType<typeof openChannel>>,
  charged: bigint,
): Promise<{ maxClaimableAmount: string; signature: Hex }> {
  const created = await opened.client.createPaymentPayload(2, requirements);
  expect(created.payload.type).toBe("voucher");
  const voucher = created.payload.voucher as { maxClaimableAmount: string; signature: Hex };
  const verified = await facilitator.verify(envelope(created.payload), requirements);
  expect(verified.isValid).toBe(true);
  await updateChannelFromSettle(opened.storage, {
    server: { chargedAmount: charged.toString() },
    local: { channelId: opened.channelId, requestAmount: requirements.amount },
  });
  return voucher;
}

describe("x402 batch-settlement on the devnet", () => {
  let opened: Awaited<ReturnType<typeof openChannel>>;
  let lastVoucher: { maxClaimableAmount: string; signature: Hex };
  const charges = [10_000n, 7_000n, 10_000n];
  const charged = charges.reduce((a, b) => a + b, 0n);

  it("the contracts sit at the scheme's canonical addresses and hash as x402 does", async () => {
    expect(DEVNET_ADDRESSES.batchSettlement).toBe(devnet.deployment.addresses.batchSettlement);
    for (const address of [DEVNET_ADDRESSES.batchSettlement, DEVNET_ADDRESSES.erc3009DepositCollector]) {
      expect(await publicClient.getCode({ address })).not.toBe("0x");
    }
    const channelId = "0x1111111111111111111111111111111111111111111111111111111111111111";
    const onChain = await publicClient.readContract({
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: batchSettlementAbi,
      functionName: "getVoucherDigest",
      args: [channelId, 123n],
    });
    const domain = {
      name: "x402 Batch Settlement",
      version: "1",
      chainId: DEVNET_L2_CHAIN_ID,
      verifyingContract: BATCH_SETTLEMENT_ADDRESS,
    };
    expect(onChain).toBe(
      hashTypedData({
        domain,
        types: {
          Voucher: [
            { name: "channelId", type: "bytes32" },
            { name: "maxClaimableAmount", type: "uint128" },
          ],
        },
        primaryType: "Voucher",
        message: { channelId, maxClaimableAmount: 123n },
      }),
    );
  });

  it("deposits: x402's client signs, x402's facilitator verifies and settles, the channel holds the deposit", async () => {
    opened = await openChannel(`0x${"00".repeat(31)}01`);
    const onChainId = await publicClient.readContract({
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: batchSettlementAbi,
      functionName: "getChannelId",
      args: [opened.config],
    });
    expect(onChainId).toBe(opened.channelId);
    expect(await channel(opened.channelId)).toEqual({ balance: opened.depositAmount, totalClaimed: 0n });
  });

  it("claims the last cumulative voucher through the facilitator, then settles it to the receiver", async () => {
    for (const amount of charges.slice(1)) lastVoucher = await payRequest(opened, amount);
    // Vouchers are cumulative: the last one allows what was charged before plus one more request.
    expect(BigInt(lastVoucher.maxClaimableAmount)).toBe(charged - charges.at(-1)! + BigInt(requirements.amount));

    const claim = {
      type: "claim",
      claims: [
        {
          voucher: { channel: opened.config, maxClaimableAmount: lastVoucher.maxClaimableAmount },
          signature: lastVoucher.signature,
          totalClaimed: charged.toString(),
        },
      ],
    };
    const claimed = await facilitator.settle(envelope(claim), requirements);
    expect(claimed).toMatchObject({ success: true });
    const claimEvents = await receiptOf(claimed.transaction);
    expect(claimEvents.map((e) => e.eventName)).toEqual(["Claimed"]);
    expect(await channel(opened.channelId)).toEqual({ balance: opened.depositAmount, totalClaimed: charged });

    // Replaying the same claim changes nothing.
    const replay = await facilitator.settle(envelope(claim), requirements);
    expect(replay.success).toBe(true);
    expect((await receiptOf(replay.transaction)).length).toBe(0);

    const receiverBefore = await usdBalance(receiver);
    const settled = await facilitator.settle(envelope({ type: "settle", receiver, token }), requirements);
    expect(settled).toMatchObject({ success: true, amount: charged.toString() });
    await receiptOf(settled.transaction);
    expect(await usdBalance(receiver)).toBe(receiverBefore + charged);
    const [totalClaimed, totalSettled] = await publicClient.readContract({
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: batchSettlementAbi,
      functionName: "receivers",
      args: [receiver, token],
    });
    expect({ totalClaimed, totalSettled }).toEqual({ totalClaimed: charged, totalSettled: charged });

    const nothing = await facilitator.settle(envelope({ type: "settle", receiver, token }), requirements);
    expect(nothing).toMatchObject({ success: false, errorReason: "invalid_batch_settlement_evm_nothing_to_settle" });
  });

  it("refunds the unclaimed balance cooperatively (partial with a claim row, then the rest)", async () => {
    const refundVoucher = await signVoucher(clientSigner, opened.channelId, charged.toString(), NETWORK);
    const base = { type: "refund", channelConfig: opened.config, voucher: refundVoucher };
    expect((await facilitator.verify(envelope(base), requirements)).isValid).toBe(true);

    const unclaimed = opened.depositAmount - charged;
    const partial = 3_000n;
    const payerBefore = await usdBalance(payerAccount.address);
    const first = await facilitator.settle(
      envelope({
        ...base,
        amount: partial.toString(),
        refundNonce: "0",
        // The zero-charge voucher as a claim row (a no-op: already claimed): claim and refund go in one multicall.
        claims: [
          {
            voucher: { channel: opened.config, maxClaimableAmount: refundVoucher.maxClaimableAmount },
            signature: refundVoucher.signature,
            totalClaimed: charged.toString(),
          },
        ],
      }),
      requirements,
    );
    expect(first).toMatchObject({ success: true, amount: partial.toString() });
    expect((await receiptOf(first.transaction)).map((e) => e.eventName)).toEqual(["Refunded"]);
    expect(await usdBalance(payerAccount.address)).toBe(payerBefore + partial);

    const rest = unclaimed - partial;
    const second = await facilitator.settle(
      envelope({ ...base, amount: rest.toString(), refundNonce: "1", claims: [] }),
      requirements,
    );
    expect(second).toMatchObject({ success: true, amount: rest.toString() });
    await receiptOf(second.transaction);
    expect(await usdBalance(payerAccount.address)).toBe(payerBefore + unclaimed);
    expect(await channel(opened.channelId)).toEqual({ balance: charged, totalClaimed: charged });
    expect(
      await publicClient.readContract({
        address: BATCH_SETTLEMENT_ADDRESS,
        abi: batchSettlementAbi,
        functionName: "refundNonce",
        args: [opened.channelId],
      }),
    ).toBe(2n);

    // A refund signed for a spent nonce is refused before anything is sent.
    const stale = await facilitator.settle(
      envelope({ ...base, amount: "1", refundNonce: "1", claims: [] }),
      requirements,
    );
    expect(stale.success).toBe(false);
  });

  describe("refusals and the timed withdrawal", () => {
    let second: Awaited<ReturnType<typeof openChannel>>;
    const asReceiver = () => walletOf(receiverAccount);
    const claimRow = (maxClaimableAmount: bigint, signature: Hex, totalClaimed: bigint) => ({
      voucher: { channel: second.config, maxClaimableAmount },
      signature,
      totalClaimed,
    });

    beforeAll(async () => {
      second = await openChannel(`0x${"00".repeat(31)}02`);
    });

    it("refuses a claim above the voucher's maximum or signed by a foreign key", async () => {
      const voucher = await signVoucher(clientSigner, second.channelId, "10000", NETWORK);
      const simulateClaim = (row: ReturnType<typeof claimRow>) =>
        publicClient.simulateContract({
          account: receiverAccount,
          address: BATCH_SETTLEMENT_ADDRESS,
          abi: batchSettlementAbi,
          functionName: "claim",
          args: [[row]],
        });
      expect(await refusal(simulateClaim(claimRow(10_000n, voucher.signature, 10_001n)))).toBe("ClaimExceedsCeiling");

      const stranger = toClientEvmSigner(strangerAccount);
      const forged = await signVoucher(stranger, second.channelId, "10000", NETWORK);
      expect(await refusal(simulateClaim(claimRow(10_000n, forged.signature, 10_000n)))).toBe("InvalidSignature");

      // Through the facilitator too: a claim batch above the voucher fails its simulation, nothing is sent.
      const viaFacilitator = await facilitator.settle(
        envelope({
          type: "claim",
          claims: [
            {
              voucher: { channel: second.config, maxClaimableAmount: "10000" },
              signature: voucher.signature,
              totalClaimed: "10001",
            },
          ],
        }),
        requirements,
      );
      expect(viaFacilitator).toMatchObject({
        success: false,
        errorReason: "invalid_batch_settlement_evm_claim_simulation_failed",
      });

      // A claim batch whose authorization is signed by someone other than the receiver authorizer.
      const foreignBatch = await strangerAccount.signTypedData({
        domain: {
          name: "x402 Batch Settlement",
          version: "1",
          chainId: DEVNET_L2_CHAIN_ID,
          verifyingContract: BATCH_SETTLEMENT_ADDRESS,
        },
        types: {
          ClaimBatch: [{ name: "claims", type: "ClaimEntry[]" }],
          ClaimEntry: [
            { name: "channelId", type: "bytes32" },
            { name: "maxClaimableAmount", type: "uint128" },
            { name: "totalClaimed", type: "uint128" },
          ],
        },
        primaryType: "ClaimBatch",
        message: { claims: [{ channelId: second.channelId, maxClaimableAmount: 10_000n, totalClaimed: 10_000n }] },
      });
      expect(
        await refusal(
          publicClient.simulateContract({
            account: strangerAccount,
            address: BATCH_SETTLEMENT_ADDRESS,
            abi: batchSettlementAbi,
            functionName: "claimWithSignature",
            args: [[claimRow(10_000n, voucher.signature, 10_000n)], foreignBatch],
          }),
        ),
      ).toBe("InvalidSignature");
      expect(await channel(second.channelId)).toEqual({ balance: second.depositAmount, totalClaimed: 0n });
    });

    it("refuses a withdrawal above the unclaimed balance and a finalize before the delay; pays what is unclaimed after it", async () => {
      const payer = walletOf(payerAccount);
      const receiverWallet = asReceiver();
      const write = async (hash: Promise<Hex>) => receiptOf(await hash);
      const claimTo = async (total: bigint) => {
        const voucher = await signVoucher(clientSigner, second.channelId, total.toString(), NETWORK);
        await write(
          receiverWallet.writeContract({
            address: BATCH_SETTLEMENT_ADDRESS,
            abi: batchSettlementAbi,
            functionName: "claim",
            args: [[claimRow(total, voucher.signature, total)]],
          }),
        );
      };

      await claimTo(10_000n);
      const unclaimed = second.depositAmount - 10_000n;
      const initiate = (amount: bigint) =>
        publicClient.simulateContract({
          account: payerAccount,
          address: BATCH_SETTLEMENT_ADDRESS,
          abi: batchSettlementAbi,
          functionName: "initiateWithdraw",
          args: [second.config, amount],
        });
      expect(await refusal(initiate(unclaimed + 1n))).toBe("WithdrawAmountExceedsAvailable");

      const started = await write(
        payer.writeContract({
          address: BATCH_SETTLEMENT_ADDRESS,
          abi: batchSettlementAbi,
          functionName: "initiateWithdraw",
          args: [second.config, unclaimed],
        }),
      );
      expect(started.map((e) => e.eventName)).toEqual(["WithdrawInitiated"]);
      const finalize = () =>
        publicClient.simulateContract({
          account: payerAccount,
          address: BATCH_SETTLEMENT_ADDRESS,
          abi: batchSettlementAbi,
          functionName: "finalizeWithdraw",
          args: [second.config],
        });
      expect(await refusal(finalize())).toBe("WithdrawDelayNotElapsed");

      // The receiver claims more during the delay; the withdrawal then pays only what is still unclaimed.
      await claimTo(20_000n);
      await publicClient.request({ method: "evm_increaseTime", params: [WITHDRAW_DELAY] } as never);
      await publicClient.request({ method: "evm_mine", params: [] } as never);

      const payerBefore = await usdBalance(payerAccount.address);
      const finalized = await write(
        payer.writeContract({
          address: BATCH_SETTLEMENT_ADDRESS,
          abi: batchSettlementAbi,
          functionName: "finalizeWithdraw",
          args: [second.config],
        }),
      );
      const paid = second.depositAmount - 20_000n;
      expect(finalized.map((e) => e.eventName)).toEqual(["WithdrawFinalized"]);
      expect(await usdBalance(payerAccount.address)).toBe(payerBefore + paid);
      expect(await channel(second.channelId)).toEqual({ balance: 20_000n, totalClaimed: 20_000n });
      const [pendingAmount, initiatedAt] = await publicClient.readContract({
        address: BATCH_SETTLEMENT_ADDRESS,
        abi: batchSettlementAbi,
        functionName: "pendingWithdrawals",
        args: [second.channelId],
      });
      expect({ pendingAmount, initiatedAt }).toEqual({ pendingAmount: 0n, initiatedAt: 0 });
    });
  });
});
