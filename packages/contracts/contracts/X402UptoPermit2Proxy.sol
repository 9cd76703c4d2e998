// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ISignatureTransfer} from "./interfaces/ISignatureTransfer.sol";

/// @title Permit2 proxy of x402's `upto` scheme (EVM)
/// @notice The payer signs a Permit2 witness transfer of up to a maximum, with this contract as spender and a witness
///         naming the recipient (`to`), the one facilitator allowed to settle, and the earliest settlement time. The
///         facilitator then settles any amount up to that maximum, once (Permit2's nonce), to that recipient only.
/// @dev Written against the ABI and the witness type x402's `upto` client and facilitator use, so that x402's
///      libraries work with it unchanged. The devnet places the runtime code at the scheme's canonical address with
///      `hardhat_setCode`: no constructor, no immutable; Permit2's canonical address is a constant.
///      Not included: `settleWithPermit` (EIP-2612 gas sponsoring; the devnet's token has no EIP-2612 permit).
contract X402UptoPermit2Proxy {
    /// @notice What the payer's signature binds besides the permit.
    struct Witness {
        address to;
        address facilitator;
        uint256 validAfter;
    }

    /// @notice Permit2 at its canonical address.
    ISignatureTransfer public constant PERMIT2 = ISignatureTransfer(0x000000000022D473030F116dDEE9F6B43aC78BA3);

    /// @notice The rest of Permit2's witness type string: the witness member, then the referenced types in
    ///         EIP-712 order.
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)";

    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,address facilitator,uint256 validAfter)");

    /// @dev Reentrancy guard in transient storage (EIP-1153; the devnet's EVM is cancun or later).
    bool private transient _entered;

    event Settled();

    /// @notice The settled amount is above the signed maximum.
    error AmountExceedsPermitted();
    /// @notice The caller is not the facilitator the payer named.
    error UnauthorizedFacilitator();
    /// @notice A zero settlement needs no transaction.
    error InvalidAmount();
    error InvalidOwner();
    error InvalidDestination();
    /// @notice The witness's `validAfter` is still in the future.
    error PaymentTooEarly();
    /// @notice `settle` was entered again during a settlement (named as x402's ABI names it).
    error ReentrancyGuardReentrantCall();

    modifier nonReentrant() {
        if (_entered) revert ReentrancyGuardReentrantCall();
        _entered = true;
        _;
        _entered = false;
    }

    /// @notice Moves `amount` (at most `permit.permitted.amount`) from `owner` to `witness.to` through Permit2.
    function settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        if (amount > permit.permitted.amount) revert AmountExceedsPermitted();
        // Only the named facilitator chooses the amount: anyone else holding the payload could charge the maximum.
        if (msg.sender != witness.facilitator) revert UnauthorizedFacilitator();
        if (amount == 0) revert InvalidAmount();
        if (owner == address(0)) revert InvalidOwner();
        if (witness.to == address(0)) revert InvalidDestination();
        if (block.timestamp < witness.validAfter) revert PaymentTooEarly();

        bytes32 witnessHash =
            keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.facilitator, witness.validAfter));
        PERMIT2.permitWitnessTransferFrom(
            permit,
            ISignatureTransfer.SignatureTransferDetails({to: witness.to, requestedAmount: amount}),
            owner,
            witnessHash,
            WITNESS_TYPE_STRING,
            signature
        );
        emit Settled();
    }
}
