/**
 * x402's upto libraries (@x402/evm 2.27.0, unmodified) against our Permit2 and upto proxy on a served devnet: the
 * client signs a Permit2 witness transfer of up to 1.00 USD, the facilitator verifies it and settles less; balances
 * are read back from the chain. The contracts' refusals are also driven directly (simulated, so nothing is mined).
 */
import {
  permit2Abi,
  USD_TOKEN_NAME,
  USD_TOKEN_VERSION,
  usdTokenAbi,
  x402UptoPermit2ProxyAbi,
} from "@agent-tools/contracts";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import {
  toClientEvmSigner,
  toFacilitatorEvmSigner,
  uptoPermit2WitnessTypes,
  PERMIT2_ADDRESS as X402_PERMIT2_ADDRESS,
  x402UptoPermit2ProxyABI,
  x402UptoPermit2ProxyAddress,
} from "@x402/evm";
import { createPermit2ApprovalTx, UptoEvmScheme as UptoClient } from "@x402/evm/upto/client";
import { UptoEvmScheme as UptoFacilitator } from "@x402/evm/upto/facilitator";
import {
  type Abi,
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  domainSeparator,
  getAddress,
  type Hex,
  http,
  maxUint256,
  type PublicClient,
  parseEventLogs,
  publicActions,
} from "viem";
import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEVNET_ACCOUNTS,
  DEVNET_ADDRESSES,
  DEVNET_HOLDER_INDEXES,
  DEVNET_L2_CHAIN_ID,
  devnetL2Chain,
  PERMIT2_ADDRESS,
  type RunningDevnet,
  startDevnet,
  UPTO_PERMIT2_PROXY_ADDRESS,
} from "../src/index.js";

const NETWORK = `eip155:${DEVNET_L2_CHAIN_ID}` as const;
const MAX = 1_000_000n; // 1.00 USD (6 decimals)
const SETTLED = 70_000n; // 0.07 USD

const account = (index: number) => privateKeyToAccount(DEVNET_ACCOUNTS[index]!.privateKey);
const payerAccount = account(2);
const facilitatorAccount = account(7);
const strangerAccount = account(5);
const payTo = DEVNET_ACCOUNTS[0]!.address;
const stranger = strangerAccount.address;
const token = DEVNET_ADDRESSES.usdToken;

/**
 * The proxy's ABI as x402 has it, with the errors of our proxy (x402's list lacks the zero-amount one) and of Permit2
 * (the proxy passes them on unchanged), so that a refusal is decoded by name.
 */
const settleAbi = [
  ...(x402UptoPermit2ProxyABI as Abi),
  ...[...(x402UptoPermit2ProxyAbi as Abi), ...(permit2Abi as Abi)].filter((i) => i.type === "error"),
];

interface Permit2Authorization {
  from: Address;
  permitted: { token: Address; amount: string };
  spender: Address;
  nonce: string;
  deadline: string;
  witness: { to: Address; facilitator: Address; validAfter: string };
}
// A type, not an interface: it must fit x402's `Record<string, unknown>` payload.
type UptoPayload = {
  signature: Hex;
  permit2Authorization: Permit2Authorization;
};

let devnet: RunningDevnet;
let publicClient: PublicClient;
let facilitator: UptoFacilitator;
let requirements: PaymentRequirements;

function walletOf(signer: PrivateKeyAccount) {
  return createWalletClient({
    account: signer,
    chain: devnetL2Chain,
    transport: http(devnet.deployment.l2.rpcUrl),
  }).extend(publicActions);
}

/**
 * x402's facilitator over a viem wallet client. Its reads go through the wallet client, so a simulated `settle` is
 * sent from the facilitator's address: the proxy refuses any other caller than the witness's facilitator.
 */
function facilitatorOf(signer: PrivateKeyAccount, read: "as facilitator" | "without account" = "as facilitator") {
  const wallet = walletOf(signer);
  return new UptoFacilitator(
    toFacilitatorEvmSigner({
      address: signer.address,
      readContract: (args) =>
        read === "as facilitator" ? wallet.readContract(args as never) : publicClient.readContract(args as never),
      verifyTypedData: (args) => wallet.verifyTypedData(args as never),
      writeContract: (args) => wallet.writeContract(args as never),
      sendTransaction: (args) => wallet.sendTransaction(args),
      waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args),
      getCode: (args) => wallet.getCode(args),
    }),
  );
}

beforeAll(async () => {
  devnet = await startDevnet({ host: "127.0.0.1", l1Port: 0, l2Port: 0 });
  publicClient = createPublicClient({ chain: devnetL2Chain, transport: http(devnet.deployment.l2.rpcUrl) });
  facilitator = facilitatorOf(facilitatorAccount);
  requirements = {
    scheme: "upto",
    network: NETWORK,
    asset: token,
    amount: MAX.toString(),
    payTo,
    maxTimeoutSeconds: 300,
    // The facilitator announces the address the payer must name in the witness (x402's getExtra).
    extra: { name: USD_TOKEN_NAME, version: USD_TOKEN_VERSION, ...facilitator.getExtra(NETWORK) },
  };
});

afterAll(async () => {
  await devnet?.close();
});

const usdBalance = (owner: Address) =>
  publicClient.readContract({ address: token, abi: usdTokenAbi, functionName: "balanceOf", args: [owner] });

/** A payment x402's client signs for `requirements` (up to 1.00 USD, the facilitator named in the witness). */
async function pay(payer: PrivateKeyAccount = payerAccount): Promise<PaymentPayload & { payload: UptoPayload }> {
  const client = new UptoClient(toClientEvmSigner(payer));
  const created = await client.createPaymentPayload(2, requirements);
  return { x402Version: 2, accepted: requirements, payload: created.payload as unknown as UptoPayload };
}

const settleFor = (amount: bigint): PaymentRequirements => ({ ...requirements, amount: amount.toString() });

/** Whether the permit's nonce is spent (Permit2's unordered nonces: bit `nonce & 0xff` of word `nonce >> 8`). */
async function nonceUsed(auth: Permit2Authorization): Promise<boolean> {
  const nonce = BigInt(auth.nonce);
  const word = await publicClient.readContract({
    address: PERMIT2_ADDRESS,
    abi: permit2Abi,
    functionName: "nonceBitmap",
    args: [auth.from, nonce >> 8n],
  });
  return ((word >> (nonce & 0xffn)) & 1n) === 1n;
}

/** The proxy's `settle` arguments of a payload, as x402's facilitator builds them. */
function settleArgs(payload: UptoPayload, amount: bigint, witness: Partial<Permit2Authorization["witness"]> = {}) {
  const auth = payload.permit2Authorization;
  return [
    {
      permitted: { token: auth.permitted.token, amount: BigInt(auth.permitted.amount) },
      nonce: BigInt(auth.nonce),
      deadline: BigInt(auth.deadline),
    },
    amount,
    auth.from,
    {
      to: witness.to ?? auth.witness.to,
      facilitator: witness.facilitator ?? auth.witness.facilitator,
      validAfter: BigInt(witness.validAfter ?? auth.witness.validAfter),
    },
    payload.signature,
  ] as const;
}

/** The custom error a simulated `settle` from `caller` reverts with (or undefined when it would succeed). */
async function settleRefusal(
  caller: PrivateKeyAccount,
  args: ReturnType<typeof settleArgs>,
): Promise<string | undefined> {
  try {
    await publicClient.simulateContract({
      account: caller,
      address: UPTO_PERMIT2_PROXY_ADDRESS,
      abi: settleAbi,
      functionName: "settle",
      args,
    });
  } catch (error) {
    if (error instanceof BaseError) {
      const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
      if (reverted instanceof ContractFunctionRevertedError) return reverted.data?.errorName ?? reverted.reason;
    }
    throw error;
  }
  return undefined;
}

async function mined(hash: Hex | Promise<Hex>) {
  const receipt = await publicClient.waitForTransactionReceipt({ hash: await hash });
  expect(receipt.status).toBe("success");
  return receipt;
}

describe("x402 upto on the devnet", () => {
  it("places Permit2 and the proxy at x402's canonical addresses, with Permit2's domain and x402's constants", async () => {
    expect(DEVNET_ADDRESSES.permit2).toBe(X402_PERMIT2_ADDRESS);
    expect(DEVNET_ADDRESSES.uptoPermit2Proxy).toBe(x402UptoPermit2ProxyAddress);
    expect(devnet.deployment.addresses).toMatchObject({
      permit2: PERMIT2_ADDRESS,
      uptoPermit2Proxy: UPTO_PERMIT2_PROXY_ADDRESS,
    });
    for (const address of [PERMIT2_ADDRESS, UPTO_PERMIT2_PROXY_ADDRESS]) {
      expect(await publicClient.getCode({ address })).not.toBe("0x");
    }
    expect(
      await publicClient.readContract({ address: PERMIT2_ADDRESS, abi: permit2Abi, functionName: "DOMAIN_SEPARATOR" }),
    ).toBe(
      domainSeparator({ domain: { name: "Permit2", chainId: DEVNET_L2_CHAIN_ID, verifyingContract: PERMIT2_ADDRESS } }),
    );
    const proxy = { address: UPTO_PERMIT2_PROXY_ADDRESS, abi: x402UptoPermit2ProxyABI } as const;
    expect(await publicClient.readContract({ ...proxy, functionName: "PERMIT2" })).toBe(PERMIT2_ADDRESS);
    expect(await publicClient.readContract({ ...proxy, functionName: "WITNESS_TYPE_STRING" })).toBe(
      "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)",
    );
    // Every funded account made Permit2's one-time approval during seeding.
    for (const i of DEVNET_HOLDER_INDEXES) {
      const allowance = await publicClient.readContract({
        address: token,
        abi: usdTokenAbi,
        functionName: "allowance",
        args: [DEVNET_ACCOUNTS[i]!.address, PERMIT2_ADDRESS],
      });
      expect(allowance, `account ${i}`).toBe(maxUint256);
    }
  });

  it("signs up to 1.00 USD with x402's client; x402's facilitator verifies it and settles 0.07 USD", async () => {
    const payment = await pay();
    const auth = payment.payload.permit2Authorization;
    expect(auth).toMatchObject({
      from: payerAccount.address,
      permitted: { token, amount: MAX.toString() },
      spender: UPTO_PERMIT2_PROXY_ADDRESS,
      witness: { to: payTo, facilitator: facilitatorAccount.address, validAfter: "0" },
    });

    expect(await facilitator.verify(payment, requirements)).toMatchObject({
      isValid: true,
      payer: payerAccount.address,
    });

    const [payerBefore, payToBefore] = await Promise.all([usdBalance(payerAccount.address), usdBalance(payTo)]);
    const settled = await facilitator.settle(payment, settleFor(SETTLED));
    expect(settled).toMatchObject({ success: true, amount: SETTLED.toString(), payer: payerAccount.address });
    const receipt = await mined(settled.transaction as Hex);
    expect(getAddress(receipt.from)).toBe(facilitatorAccount.address);
    expect(receipt.to && getAddress(receipt.to)).toBe(UPTO_PERMIT2_PROXY_ADDRESS);
    const events = parseEventLogs({
      abi: [...(x402UptoPermit2ProxyABI as Abi), ...(usdTokenAbi as Abi)],
      logs: receipt.logs,
    });
    expect(events.map((e) => e.eventName)).toEqual(["Transfer", "Settled"]);
    expect(events[0]!.args).toEqual({ from: payerAccount.address, to: payTo, value: SETTLED });

    expect(await usdBalance(payerAccount.address)).toBe(payerBefore - SETTLED);
    expect(await usdBalance(payTo)).toBe(payToBefore + SETTLED);
    expect(await nonceUsed(auth)).toBe(true);

    // The authorization is spent: settling it again (any amount) is refused and moves nothing.
    const again = await facilitator.settle(payment, settleFor(SETTLED));
    expect(again).toMatchObject({ success: false, errorReason: "permit2_simulation_failed", transaction: "" });
    expect(await settleRefusal(facilitatorAccount, settleArgs(payment.payload, 1n))).toBe("InvalidNonce");
    expect(await usdBalance(payerAccount.address)).toBe(payerBefore - SETTLED);
  });

  it("refuses to settle more than the authorized maximum (x402's check and the proxy's)", async () => {
    const payment = await pay();
    const before = await usdBalance(payerAccount.address);
    expect(await facilitator.settle(payment, settleFor(MAX + 1n))).toMatchObject({
      success: false,
      errorReason: "invalid_upto_evm_payload_settlement_exceeds_amount",
    });
    expect(await settleRefusal(facilitatorAccount, settleArgs(payment.payload, MAX + 1n))).toBe(
      "AmountExceedsPermitted",
    );
    expect(await usdBalance(payerAccount.address)).toBe(before);
    expect(await nonceUsed(payment.payload.permit2Authorization)).toBe(false);

    // The whole maximum is allowed.
    const settled = await facilitator.settle(payment, settleFor(MAX));
    expect(settled).toMatchObject({ success: true, amount: MAX.toString() });
    await mined(settled.transaction as Hex);
    expect(await usdBalance(payerAccount.address)).toBe(before - MAX);
  });

  it("refuses a payload whose recipient was changed after signing", async () => {
    const payment = await pay();
    const strangerBefore = await usdBalance(stranger);
    const tampered = {
      ...payment,
      payload: {
        ...payment.payload,
        permit2Authorization: {
          ...payment.payload.permit2Authorization,
          witness: { ...payment.payload.permit2Authorization.witness, to: stranger },
        },
      },
    };
    // Against the server's requirements the recipient does not match ...
    expect(await facilitator.verify(tampered, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_permit2_recipient_mismatch",
    });
    // ... and with requirements rewritten to match, the signature does not.
    const redirected = { ...requirements, payTo: stranger };
    expect(await facilitator.verify({ ...tampered, accepted: redirected }, redirected)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_permit2_signature",
    });
    expect(
      await facilitator.settle({ ...tampered, accepted: redirected }, { ...redirected, amount: SETTLED.toString() }),
    ).toMatchObject({ success: false, errorReason: "invalid_permit2_signature" });
    // On chain, Permit2 recovers someone else from the signature over the changed witness.
    expect(await settleRefusal(facilitatorAccount, settleArgs(payment.payload, SETTLED, { to: stranger }))).toBe(
      "InvalidSigner",
    );
    expect(await usdBalance(stranger)).toBe(strangerBefore);
    expect(await nonceUsed(payment.payload.permit2Authorization)).toBe(false);
  });

  it("settles zero without a transaction and leaves the authorization unused", async () => {
    const payment = await pay();
    const [block, before] = await Promise.all([publicClient.getBlockNumber(), usdBalance(payerAccount.address)]);
    expect(await facilitator.settle(payment, settleFor(0n))).toEqual({
      success: true,
      transaction: "",
      network: NETWORK,
      payer: payerAccount.address,
      amount: "0",
    });
    expect(await publicClient.getBlockNumber()).toBe(block);
    expect(await usdBalance(payerAccount.address)).toBe(before);
    expect(await nonceUsed(payment.payload.permit2Authorization)).toBe(false);
    // The proxy itself refuses a zero settlement (it would only spend the nonce).
    expect(await settleRefusal(facilitatorAccount, settleArgs(payment.payload, 0n))).toBe("InvalidAmount");
  });

  it("lets only the facilitator the payer named settle, and simulates as that facilitator", async () => {
    const payment = await pay();
    // Another caller with the same payload, or naming itself in the witness, cannot settle it.
    expect(await settleRefusal(strangerAccount, settleArgs(payment.payload, SETTLED))).toBe("UnauthorizedFacilitator");
    expect(await settleRefusal(strangerAccount, settleArgs(payment.payload, SETTLED, { facilitator: stranger }))).toBe(
      "InvalidSigner",
    );
    // x402's facilitator with another key refuses the payload before the chain.
    expect(await facilitatorOf(strangerAccount).verify(payment, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "upto_facilitator_mismatch",
    });
    // A facilitator signer whose reads carry no account simulates `settle` from the zero address: refused.
    expect(await facilitatorOf(facilitatorAccount, "without account").verify(payment, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "permit2_simulation_failed",
    });
    expect(await facilitator.verify(payment, requirements)).toMatchObject({ isValid: true });
  });

  it("refuses a payer without Permit2's approval (permit2_allowance_required) until x402's approval transaction", async () => {
    const payer = account(9);
    const wallet = walletOf(payer);
    await mined(
      wallet.writeContract({ address: token, abi: usdTokenAbi, functionName: "approve", args: [PERMIT2_ADDRESS, 0n] }),
    );
    const payment = await pay(payer);
    expect(await facilitator.verify(payment, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "permit2_allowance_required",
    });

    await mined(wallet.sendTransaction(createPermit2ApprovalTx(token)));
    expect(await facilitator.verify(payment, requirements)).toMatchObject({ isValid: true, payer: payer.address });
  });

  it("refuses a permit whose nonce the payer invalidated, or whose deadline passed (Permit2)", async () => {
    const payment = await pay();
    const auth = payment.payload.permit2Authorization;
    const nonce = BigInt(auth.nonce);
    const receipt = await mined(
      walletOf(payerAccount).writeContract({
        address: PERMIT2_ADDRESS,
        abi: permit2Abi,
        functionName: "invalidateUnorderedNonces",
        args: [nonce >> 8n, 1n << (nonce & 0xffn)],
      }),
    );
    expect(parseEventLogs({ abi: permit2Abi, logs: receipt.logs })).toMatchObject([
      {
        eventName: "UnorderedNonceInvalidation",
        args: { owner: payerAccount.address, word: nonce >> 8n, mask: 1n << (nonce & 0xffn) },
      },
    ]);
    expect(await nonceUsed(auth)).toBe(true);
    expect(await facilitator.verify(payment, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "permit2_simulation_failed",
    });
    expect(await settleRefusal(facilitatorAccount, settleArgs(payment.payload, SETTLED))).toBe("InvalidNonce");

    // A permit signed with x402's types whose deadline is already behind the chain's clock.
    const latest = await publicClient.getBlock({ blockTag: "latest" });
    const expired = {
      ...auth,
      nonce: (nonce + 1n).toString(),
      deadline: (latest.timestamp - 1n).toString(),
    };
    const signature = await payerAccount.signTypedData({
      domain: { name: "Permit2", chainId: DEVNET_L2_CHAIN_ID, verifyingContract: PERMIT2_ADDRESS },
      types: uptoPermit2WitnessTypes,
      primaryType: "PermitWitnessTransferFrom",
      message: {
        permitted: { token: expired.permitted.token, amount: BigInt(expired.permitted.amount) },
        spender: expired.spender,
        nonce: BigInt(expired.nonce),
        deadline: BigInt(expired.deadline),
        witness: { ...expired.witness, validAfter: BigInt(expired.witness.validAfter) },
      },
    });
    expect(
      await settleRefusal(facilitatorAccount, settleArgs({ signature, permit2Authorization: expired }, SETTLED)),
    ).toBe("SignatureExpired");
  });
});
