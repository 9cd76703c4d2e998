// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Multicall} from "@openzeppelin/contracts/utils/Multicall.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";

import {IDepositCollector} from "./interfaces/IDepositCollector.sol";

/// @title Payment channels of x402's `batch-settlement` scheme (EVM)
/// @notice A payer escrows a token in a channel once; the receiver side later claims cumulative, payer-signed
///         vouchers (accounting only) and sweeps the claimed amounts to the receiver with `settle`. Unclaimed escrow
///         goes back to the payer through a cooperative refund or, after the channel's delay, a timed withdrawal.
/// @dev Written for the devnet against the scheme's published ABI and EIP-712 types, so that x402's libraries work
///      with it unchanged. The devnet places the runtime code at the scheme's canonical address with
///      `hardhat_setCode`, so the contract has no constructor and no immutables: the EIP-712 domain separator is
///      computed from `block.chainid` and `address(this)` on every use.
contract BatchSettlement is Multicall {
    using SafeERC20 for IERC20;

    /// @notice The fixed parameters of a channel; their EIP-712 hash is the channel id.
    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    /// @notice Escrowed `balance` (deposits minus refunds and withdrawals) and the cumulative amount claimed from it.
    struct ChannelState {
        uint128 balance;
        uint128 totalClaimed;
    }

    /// @notice A timed withdrawal in progress (`initiatedAt == 0`: none).
    struct WithdrawalState {
        uint128 amount;
        uint40 initiatedAt;
    }

    /// @notice What a receiver has claimed and been paid out, per token.
    struct ReceiverState {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    /// @notice A voucher's content; the payer (or its authorizer) signed `Voucher(channelId, maxClaimableAmount)`.
    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    /// @notice One claim row: a signed voucher and the new cumulative total to record (at most its maximum).
    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed;
    }

    uint40 public constant MIN_WITHDRAW_DELAY = 900;
    uint40 public constant MAX_WITHDRAW_DELAY = 2_592_000;

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant DOMAIN_NAME_HASH = keccak256("x402 Batch Settlement");
    bytes32 private constant DOMAIN_VERSION_HASH = keccak256("1");

    bytes32 public constant CHANNEL_CONFIG_TYPEHASH = keccak256(
        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
    );
    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 public constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    bytes32 public constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 public constant CLAIM_BATCH_TYPEHASH = keccak256(
        "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
    );

    /// @dev Reentrancy guard in transient storage (EIP-1153; the devnet's EVM is cancun or later).
    bool private transient _entered;

    mapping(bytes32 channelId => ChannelState) public channels;
    mapping(bytes32 channelId => WithdrawalState) public pendingWithdrawals;
    /// @notice Next nonce a signed refund must carry; every executed refund (signed or direct) advances it.
    mapping(bytes32 channelId => uint256) public refundNonce;
    mapping(address receiver => mapping(address token => ReceiverState)) public receivers;

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance);
    event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 finalizeAfter);
    event WithdrawFinalized(bytes32 indexed channelId, address indexed sender, uint128 amount);

    error InvalidChannel();
    error WithdrawDelayOutOfRange();
    error ZeroDeposit();
    error InvalidCollector();
    error DepositOverflow();
    error DepositCollectionFailed();
    error EmptyBatch();
    error NotAuthorizedToClaim();
    error NotReceiverAuthorizer();
    error InvalidSignature();
    error ClaimExceedsCeiling();
    error ClaimExceedsBalance();
    error NotAuthorizedToRefund();
    error InvalidRefundNonce();
    error ZeroRefund();
    error NotAuthorizedToWithdraw();
    error NothingToWithdraw();
    error WithdrawalAlreadyPending();
    error WithdrawalNotPending();
    error WithdrawAmountExceedsAvailable();
    error WithdrawDelayNotElapsed();
    error ReentrantCall();

    modifier nonReentrant() {
        if (_entered) revert ReentrantCall();
        _entered = true;
        _;
        _entered = false;
    }

    /* ------------------------------------------------------------------ */
    /*                               Deposit                              */
    /* ------------------------------------------------------------------ */

    /// @notice Adds `amount` to the channel of `config` (creating it when its escrow is empty); `collector` pulls
    ///         the tokens from the payer with the authorization in `collectorData`.
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
        nonReentrant
    {
        if (
            config.payer == address(0) || config.receiver == address(0) || config.receiverAuthorizer == address(0)
                || config.token == address(0)
        ) revert InvalidChannel();
        if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY) {
            revert WithdrawDelayOutOfRange();
        }
        if (amount == 0) revert ZeroDeposit();
        if (collector == address(0)) revert InvalidCollector();

        bytes32 channelId = getChannelId(config);
        ChannelState storage channel = channels[channelId];
        uint128 previous = channel.balance;
        if (amount > type(uint128).max - previous) revert DepositOverflow();
        channel.balance = previous + amount;

        IERC20 token = IERC20(config.token);
        uint256 held = token.balanceOf(address(this));
        IDepositCollector(collector).collect(config.payer, config.token, amount, channelId, collectorData);
        if (token.balanceOf(address(this)) != held + amount) revert DepositCollectionFailed();

        if (previous == 0 && channel.totalClaimed == 0) emit ChannelCreated(channelId, config);
        emit Deposited(channelId, msg.sender, amount, channel.balance);
    }

    /* ------------------------------------------------------------------ */
    /*                           Claim and settle                         */
    /* ------------------------------------------------------------------ */

    /// @notice Records claims; the caller must be the receiver or the receiver authorizer of every row's channel.
    function claim(VoucherClaim[] calldata voucherClaims) external nonReentrant {
        uint256 count = voucherClaims.length;
        if (count == 0) revert EmptyBatch();
        for (uint256 i; i < count; ++i) {
            ChannelConfig calldata config = voucherClaims[i].voucher.channel;
            if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) {
                revert NotAuthorizedToClaim();
            }
            _applyClaim(voucherClaims[i]);
        }
    }

    /// @notice Records claims that the rows' common receiver authorizer signed as a `ClaimBatch`; anyone may submit.
    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature)
        external
        nonReentrant
    {
        uint256 count = voucherClaims.length;
        if (count == 0) revert EmptyBatch();
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        for (uint256 i = 1; i < count; ++i) {
            if (voucherClaims[i].voucher.channel.receiverAuthorizer != authorizer) revert NotReceiverAuthorizer();
        }
        if (!SignatureChecker.isValidSignatureNow(authorizer, getClaimBatchDigest(voucherClaims), authorizerSignature))
        {
            revert InvalidSignature();
        }
        for (uint256 i; i < count; ++i) {
            _applyClaim(voucherClaims[i]);
        }
    }

    /// @notice Pays `receiver` what it has claimed in `token` and not yet been paid. Anyone may call.
    function settle(address receiver, address token) external nonReentrant {
        ReceiverState storage state = receivers[receiver][token];
        uint128 due = state.totalClaimed - state.totalSettled;
        if (due == 0) return;
        state.totalSettled = state.totalClaimed;
        IERC20(token).safeTransfer(receiver, due);
        emit Settled(receiver, token, msg.sender, due);
    }

    /* ------------------------------------------------------------------ */
    /*                               Refunds                              */
    /* ------------------------------------------------------------------ */

    /// @notice Returns up to `amount` of the unclaimed escrow to the payer; called by the receiver side.
    function refund(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) revert NotAuthorizedToRefund();
        _refund(config, getChannelId(config), amount);
    }

    /// @notice `refund` authorized by the receiver authorizer's EIP-712 `Refund` signature at the current nonce;
    ///         anyone may submit.
    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external nonReentrant {
        bytes32 channelId = getChannelId(config);
        if (nonce != refundNonce[channelId]) revert InvalidRefundNonce();
        if (
            !SignatureChecker.isValidSignatureNow(
                config.receiverAuthorizer, getRefundDigest(channelId, nonce, amount), receiverAuthorizerSignature
            )
        ) revert InvalidSignature();
        _refund(config, channelId, amount);
    }

    /* ------------------------------------------------------------------ */
    /*                          Timed withdrawal                          */
    /* ------------------------------------------------------------------ */

    /// @notice Starts the payer's withdrawal of `amount` (at most the unclaimed escrow); it can be finalized once
    ///         the channel's `withdrawDelay` has passed.
    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        _requirePayerSide(config);
        if (amount == 0) revert NothingToWithdraw();
        bytes32 channelId = getChannelId(config);
        WithdrawalState storage pending = pendingWithdrawals[channelId];
        if (pending.initiatedAt != 0) revert WithdrawalAlreadyPending();
        ChannelState storage channel = channels[channelId];
        if (amount > channel.balance - channel.totalClaimed) revert WithdrawAmountExceedsAvailable();

        uint40 now_ = uint40(block.timestamp);
        pending.amount = amount;
        pending.initiatedAt = now_;
        emit WithdrawInitiated(channelId, amount, now_ + config.withdrawDelay);
    }

    /// @notice Completes a pending withdrawal after the delay, paying the payer the requested amount or, when the
    ///         receiver side claimed in between, what is still unclaimed.
    function finalizeWithdraw(ChannelConfig calldata config) external nonReentrant {
        _requirePayerSide(config);
        bytes32 channelId = getChannelId(config);
        WithdrawalState storage pending = pendingWithdrawals[channelId];
        uint256 initiatedAt = pending.initiatedAt;
        if (initiatedAt == 0) revert WithdrawalNotPending();
        if (block.timestamp < initiatedAt + config.withdrawDelay) revert WithdrawDelayNotElapsed();

        ChannelState storage channel = channels[channelId];
        uint128 unclaimed = channel.balance - channel.totalClaimed;
        uint128 paid = pending.amount < unclaimed ? pending.amount : unclaimed;
        delete pendingWithdrawals[channelId];
        channel.balance -= paid;

        emit WithdrawFinalized(channelId, msg.sender, paid);
        if (channel.balance == 0 && channel.totalClaimed == 0) emit ChannelClosed(channelId, config);
        if (paid > 0) IERC20(config.token).safeTransfer(config.payer, paid);
    }

    /* ------------------------------------------------------------------ */
    /*                                Views                               */
    /* ------------------------------------------------------------------ */

    /// @notice EIP-712 hash of `config` in this contract's domain: the channel id.
    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return _typedDataHash(
            keccak256(
                abi.encode(
                    CHANNEL_CONFIG_TYPEHASH,
                    config.payer,
                    config.payerAuthorizer,
                    config.receiver,
                    config.receiverAuthorizer,
                    config.token,
                    config.withdrawDelay,
                    config.salt
                )
            )
        );
    }

    /// @notice Digest the payer authorizer (or the payer) signs for a voucher.
    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _typedDataHash(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    /// @notice Digest the receiver authorizer signs for `refundWithSignature`.
    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _typedDataHash(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    /// @notice Digest the receiver authorizer signs for `claimWithSignature`: `ClaimBatch` over one
    ///         `ClaimEntry(channelId, maxClaimableAmount, totalClaimed)` per row (defined for an empty list too).
    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        uint256 count = voucherClaims.length;
        bytes32[] memory entries = new bytes32[](count);
        for (uint256 i; i < count; ++i) {
            VoucherClaim calldata row = voucherClaims[i];
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH, getChannelId(row.voucher.channel), row.voucher.maxClaimableAmount, row.totalClaimed
                )
            );
        }
        return _typedDataHash(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    /// @notice The EIP-712 domain separator: name "x402 Batch Settlement", version "1", this chain and address.
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, DOMAIN_NAME_HASH, DOMAIN_VERSION_HASH, block.chainid, address(this)));
    }

    /* ------------------------------------------------------------------ */
    /*                              Internals                             */
    /* ------------------------------------------------------------------ */

    function _typedDataHash(bytes32 structHash) private view returns (bytes32 digest) {
        bytes32 separator = DOMAIN_SEPARATOR();
        assembly ("memory-safe") {
            let ptr := mload(0x40)
            mstore(ptr, hex"1901")
            mstore(add(ptr, 0x02), separator)
            mstore(add(ptr, 0x22), structHash)
            digest := keccak256(ptr, 0x42)
        }
    }

    function _requirePayerSide(ChannelConfig calldata config) private view {
        if (msg.sender != config.payer && msg.sender != config.payerAuthorizer) revert NotAuthorizedToWithdraw();
    }

    /// @dev Raises the channel's (and the receiver's) claimed total to the row's `totalClaimed`. A row at or below
    ///      the recorded total changes nothing, so replaying an applied voucher is harmless.
    function _applyClaim(VoucherClaim calldata row) private {
        ChannelConfig calldata config = row.voucher.channel;
        bytes32 channelId = getChannelId(config);
        ChannelState storage channel = channels[channelId];
        uint128 recorded = channel.totalClaimed;
        uint128 target = row.totalClaimed;
        if (target <= recorded) return;
        if (target > row.voucher.maxClaimableAmount) revert ClaimExceedsCeiling();
        if (target > channel.balance) revert ClaimExceedsBalance();

        bytes32 digest = getVoucherDigest(channelId, row.voucher.maxClaimableAmount);
        if (config.payerAuthorizer != address(0)) {
            (address signer, ECDSA.RecoverError failure,) = ECDSA.tryRecoverCalldata(digest, row.signature);
            if (failure != ECDSA.RecoverError.NoError || signer != config.payerAuthorizer) revert InvalidSignature();
        } else if (!SignatureChecker.isValidSignatureNow(config.payer, digest, row.signature)) {
            revert InvalidSignature();
        }

        uint128 added = target - recorded;
        channel.totalClaimed = target;
        receivers[config.receiver][config.token].totalClaimed += added;
        emit Claimed(channelId, msg.sender, added, target);
    }

    /// @dev Advances the refund nonce first (even when nothing is left to refund), then pays out at most the
    ///      unclaimed escrow and shrinks (or clears) a pending withdrawal by what was refunded.
    function _refund(ChannelConfig calldata config, bytes32 channelId, uint128 amount) private {
        if (amount == 0) revert ZeroRefund();
        unchecked {
            ++refundNonce[channelId];
        }
        ChannelState storage channel = channels[channelId];
        uint128 unclaimed = channel.balance - channel.totalClaimed;
        uint128 paid = amount < unclaimed ? amount : unclaimed;
        if (paid == 0) return;
        channel.balance -= paid;

        WithdrawalState storage pending = pendingWithdrawals[channelId];
        if (pending.initiatedAt != 0) {
            if (paid >= pending.amount) delete pendingWithdrawals[channelId];
            else pending.amount -= paid;
        }

        emit Refunded(channelId, msg.sender, paid);
        if (channel.balance == 0 && channel.totalClaimed == 0) emit ChannelClosed(channelId, config);
        IERC20(config.token).safeTransfer(config.payer, paid);
    }
}
