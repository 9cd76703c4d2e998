// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title The signature-transfer surface of Permit2 that x402's Permit2 proxies call
/// @dev Struct and function names follow Uniswap's published Permit2 interface, so that the ABI (selectors and
///      `internalType`s) matches what x402's libraries encode.
interface ISignatureTransfer {
    /// @notice A token and the most of it a signature lets the spender take.
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    /// @notice What the owner signs (with the spender, implied by the caller, and an optional witness).
    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    /// @notice Where the spender sends the tokens and how many, at most `permitted.amount`.
    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask);

    /// @notice The requested amount is above the signed `maxAmount`.
    error InvalidAmount(uint256 maxAmount);

    /// @notice Used bits of an owner's nonce word (bit `nonce & 0xff` of word `nonce >> 8`).
    function nonceBitmap(address owner, uint256 wordPos) external view returns (uint256);

    /// @notice Moves `transferDetails.requestedAmount` of the permitted token from `owner` to `transferDetails.to`,
    ///         checking the owner's signature over the permit, the caller as spender and the caller's witness.
    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external;

    /// @notice Marks the bits of `mask` in the caller's nonce word `wordPos` as used.
    function invalidateUnorderedNonces(uint256 wordPos, uint256 mask) external;

    /// @notice EIP-712 domain separator: name "Permit2", this chain's id, this contract's address (no version).
    function DOMAIN_SEPARATOR() external view returns (bytes32);
}
