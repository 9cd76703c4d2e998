/**
 * L2 seeding: the EIP-3009 USD token (account 0's first deployment, so its address is the server's default
 * PAYMENT_ASSET), Multicall3, x402's batch-settlement contract and its EIP-3009 deposit collector (at the scheme's
 * canonical addresses), Permit2 and x402's upto proxy (at their canonical addresses; accounts 1-9 approve Permit2 for
 * the USD token), the B20 factory surface and the scheduled B20 tokens spread over ~720,000 blocks.
 */
import {
  B20_FACTORY_ADDRESS,
  BATCH_SETTLEMENT_ADDRESS,
  b20FactoryAbi,
  b20FactoryDeployedBytecode,
  b20StablecoinTokenDeployedBytecode,
  b20TokenAbi,
  b20TokenDeployedBytecode,
  batchSettlementDeployedBytecode,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  encodeAssetCreateParams,
  encodeStablecoinCreateParams,
  erc3009DepositCollectorDeployedBytecode,
  MULTICALL3_ADDRESS,
  multicall3DeployedBytecode,
  PERMIT2_ADDRESS,
  permit2DeployedBytecode,
  UPTO_PERMIT2_PROXY_ADDRESS,
  USD_TOKEN_DECIMALS,
  usdTokenAbi,
  usdTokenBytecode,
  x402UptoPermit2ProxyDeployedBytecode,
} from "@agent-tools/contracts";
import {
  type Address,
  type Client,
  encodeDeployData,
  encodeFunctionData,
  getAddress,
  type Hex,
  maxUint256,
  numberToHex,
} from "viem";
import { getBlock, readContract } from "viem/actions";
import { B20_BLOCK_SECONDS, B20_SCHEDULE, B20_SCHEDULE_TIP, type B20ScheduledToken } from "./b20-schedule.js";
import {
  DEPLOY_NONCES,
  DEVNET_ACCOUNTS,
  DEVNET_HOLDER_INDEXES,
  DEVNET_USD_PER_ACCOUNT,
  DEVNET_USD_UNITS_PER_ACCOUNT,
  expectedDeployAddress,
} from "./constants.js";
import type { SeedOptions } from "./seed-l1.js";
import { mineBlocks, rpc, Sender, setCode } from "./tx.js";

export interface DevnetB20Token extends B20ScheduledToken {
  /** Account the initial supply was minted to. */
  holder: Address;
  transactionHash: Hex;
}

export interface L2SeedResult {
  chainId: number;
  addresses: {
    usdToken: Address;
    b20Factory: Address;
    multicall3: Address;
    batchSettlement: Address;
    erc3009DepositCollector: Address;
    permit2: Address;
    uptoPermit2Proxy: Address;
  };
  b20Tokens: DevnetB20Token[];
  /** L2 block number after seeding ({@link B20_SCHEDULE_TIP} on a fresh chain). */
  blockNumber: number;
  /** Seconds between the mined empty blocks: 2 when the chain started early enough (see devnetL2InitialDate), else less. */
  blockSeconds: number;
  durationMs: number;
}

/**
 * Genesis date an L2 chain needs so that mining the schedule's blocks 2 seconds apart ends near the wall clock
 * (instead of ~17 days in the future, which would make every EIP-3009 authorization look expired).
 */
export function devnetL2InitialDate(now: Date = new Date()): Date {
  return new Date(now.getTime() - (B20_SCHEDULE_TIP * B20_BLOCK_SECONDS + 120) * 1000);
}

/**
 * Deploys and seeds the L2 contracts on a fresh chain reachable through `client`. The node must accept
 * `hardhat_setCode`, `hardhat_mine`, `evm_setNextBlockTimestamp` and `evm_mine`. Create the chain with
 * `initialDate: devnetL2InitialDate()` so the mined blocks can be 2 seconds apart; otherwise they share timestamps.
 */
export async function seedL2(client: Client, options: SeedOptions = {}): Promise<L2SeedResult> {
  const started = performance.now();
  const log = options.log ?? (() => {});
  const operator = DEVNET_ACCOUNTS[0]!;
  const tx = await Sender.create(client, operator.privateKey, "seeding L2");
  if (tx.nonce !== 0) {
    throw new Error(
      `seeding L2: account 0 (${operator.address}) has already sent ${tx.nonce} transactions; seedL2 needs a fresh chain`,
    );
  }

  // The USD token must be the operator's first deployment (nonce 0).
  const expectedUsd = expectedDeployAddress(DEPLOY_NONCES.usdToken);
  const deployReceipt = await tx.send("deploying UsdToken", {
    data: encodeDeployData({ abi: usdTokenAbi, bytecode: usdTokenBytecode, args: [operator.address] }),
  });
  const usdToken = deployReceipt.contractAddress ? getAddress(deployReceipt.contractAddress) : undefined;
  if (usdToken !== expectedUsd)
    throw new Error(`seeding L2: UsdToken deployed at ${usdToken}, expected ${expectedUsd}`);
  const holders = DEVNET_HOLDER_INDEXES.map((i) => DEVNET_ACCOUNTS[i]!.address);
  await tx.send("UsdToken.mintBatch", {
    to: usdToken,
    data: encodeFunctionData({
      abi: usdTokenAbi,
      functionName: "mintBatch",
      args: [holders, DEVNET_USD_UNITS_PER_ACCOUNT],
    }),
  });
  log(
    `seeding L2: deployed USD token ${usdToken} (${USD_TOKEN_DECIMALS} decimals); ` +
      `accounts 1-9 hold ${DEVNET_USD_PER_ACCOUNT.toLocaleString("en-US")} USD each`,
  );

  await setCode(client, MULTICALL3_ADDRESS, multicall3DeployedBytecode);
  await setCode(client, B20_FACTORY_ADDRESS, b20FactoryDeployedBytecode);
  // x402 batch-settlement channels: our contracts at the scheme's canonical addresses (no constructor state to set).
  await setCode(client, BATCH_SETTLEMENT_ADDRESS, batchSettlementDeployedBytecode);
  await setCode(client, ERC3009_DEPOSIT_COLLECTOR_ADDRESS, erc3009DepositCollectorDeployedBytecode);
  // x402 upto payments: Permit2 and the scheme's proxy at their canonical addresses, and every funded account's
  // one-time approval of Permit2 (what a payer does once before its first upto payment).
  await setCode(client, PERMIT2_ADDRESS, permit2DeployedBytecode);
  await setCode(client, UPTO_PERMIT2_PROXY_ADDRESS, x402UptoPermit2ProxyDeployedBytecode);
  await approvePermit2(client, usdToken);
  log(`seeding L2: placed Permit2 and x402's upto proxy; accounts 1-9 approved Permit2 for the USD token`);

  // Decide the spacing of the empty blocks: Base's 2 seconds when the chain's clock has room, else as much as fits.
  const startBlock = await getBlock(client, { blockTag: "latest" });
  const blocksToMine = B20_SCHEDULE_TIP - Number(startBlock.number);
  if (blocksToMine < B20_SCHEDULE.length + 1) {
    throw new Error(`seeding L2: chain is already at block ${startBlock.number}, past the B20 schedule`);
  }
  const nowSeconds = Math.floor(Date.now() / 1000);
  const room = nowSeconds - Number(startBlock.timestamp);
  const blockSeconds = Math.max(0, Math.min(B20_BLOCK_SECONDS, Math.floor(room / blocksToMine)));
  if (blockSeconds < B20_BLOCK_SECONDS) {
    log(
      `seeding L2: the chain's clock starts too late for ${B20_BLOCK_SECONDS}-second blocks; mining ` +
        `${blockSeconds}-second blocks (create the chain with initialDate: devnetL2InitialDate())`,
    );
  }

  let current = Number(startBlock.number);
  const b20Tokens: DevnetB20Token[] = [];
  for (const token of B20_SCHEDULE) {
    if (token.blockNumber <= current) {
      throw new Error(
        `seeding L2: ${token.symbol} is due at block ${token.blockNumber} but the chain is at ${current}`,
      );
    }
    await mineBlocks(client, token.blockNumber - current - 1, blockSeconds);
    // The token's code goes where createB20 derives it (on Base the precompile makes it; see B20Factory.sol).
    const stablecoin = token.currency !== undefined;
    await setCode(client, token.address, stablecoin ? b20StablecoinTokenDeployedBytecode : b20TokenDeployedBytecode);
    const holder = DEVNET_ACCOUNTS[token.holderIndex]!.address;
    const identity = { name: token.name, symbol: token.symbol, initialAdmin: operator.address };
    const receipt = await tx.send(`B20Factory.createB20 ${token.symbol}`, {
      to: B20_FACTORY_ADDRESS,
      gas: 1_000_000n,
      data: encodeFunctionData({
        abi: b20FactoryAbi,
        functionName: "createB20",
        args: [
          token.variantId,
          token.salt,
          stablecoin
            ? encodeStablecoinCreateParams({ ...identity, currency: token.currency! })
            : encodeAssetCreateParams({ ...identity, decimals: token.decimals }),
          [encodeFunctionData({ abi: b20TokenAbi, functionName: "mint", args: [holder, token.initialSupply] })],
        ],
      }),
    });
    if (Number(receipt.blockNumber) !== token.blockNumber) {
      throw new Error(
        `seeding L2: ${token.symbol} created in block ${receipt.blockNumber}, scheduled for ${token.blockNumber}`,
      );
    }
    current = token.blockNumber;
    b20Tokens.push({ ...token, holder, transactionHash: receipt.transactionHash });
  }

  // Up to the tip; the last block takes the wall clock's time, so blocks mined later follow real time.
  await mineBlocks(client, B20_SCHEDULE_TIP - current - 1, blockSeconds);
  const beforeTip = await getBlock(client, { blockTag: "latest" });
  const tipSeconds = Math.floor(Date.now() / 1000);
  if (tipSeconds > Number(beforeTip.timestamp))
    await rpc(client, "evm_setNextBlockTimestamp", [numberToHex(tipSeconds)]);
  await rpc(client, "evm_mine");
  const tip = await getBlock(client, { blockTag: "latest" });
  const last = b20Tokens.at(-1)!;
  const created = await readContract(client, {
    address: B20_FACTORY_ADDRESS,
    abi: b20FactoryAbi,
    functionName: "isB20Initialized",
    args: [last.address],
  });
  if (Number(tip.number) !== B20_SCHEDULE_TIP || b20Tokens.length !== B20_SCHEDULE.length || !created) {
    throw new Error(`seeding L2: ended at block ${tip.number} with ${b20Tokens.length} B20 tokens`);
  }
  const assets = b20Tokens.filter((t) => t.variant === "ASSET").length;
  log(
    `seeding L2: created ${b20Tokens.length} B20 tokens (${assets} assets, ${b20Tokens.length - assets} stablecoins) ` +
      `over ${B20_SCHEDULE_TIP.toLocaleString("en-US")} blocks`,
  );
  return {
    chainId: tx.chainId,
    addresses: {
      usdToken,
      b20Factory: B20_FACTORY_ADDRESS,
      multicall3: MULTICALL3_ADDRESS,
      batchSettlement: BATCH_SETTLEMENT_ADDRESS,
      erc3009DepositCollector: ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
      permit2: PERMIT2_ADDRESS,
      uptoPermit2Proxy: UPTO_PERMIT2_PROXY_ADDRESS,
    },
    b20Tokens,
    blockNumber: Number(tip.number),
    blockSeconds,
    durationMs: Math.round(performance.now() - started),
  };
}

/**
 * Each holder approves Permit2 for the most a uint256 holds (as x402's `createPermit2ApprovalTx` does). The holders'
 * transactions are independent, so they are signed and sent together: one block each, before the B20 schedule.
 */
async function approvePermit2(client: Client, usdToken: Address): Promise<void> {
  const data = encodeFunctionData({ abi: usdTokenAbi, functionName: "approve", args: [PERMIT2_ADDRESS, maxUint256] });
  const senders = await Promise.all(
    DEVNET_HOLDER_INDEXES.map((i) =>
      Sender.create(client, DEVNET_ACCOUNTS[i]!.privateKey, `seeding L2 (account ${i})`),
    ),
  );
  await Promise.all(
    senders.map((sender) => sender.send("UsdToken.approve(Permit2)", { to: usdToken, data, gas: 100_000n })),
  );
}
