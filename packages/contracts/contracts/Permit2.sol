// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";

import {ISignatureTransfer} from "./interfaces/ISignatureTransfer.sol";

/// @title Permit2's signature transfers (the part x402's Permit2 proxies use)
/// @notice An owner approves this contract once per token; afterwards a spender moves the owner's tokens with a
///         signed, single-use, time-limited permit that names the spender, the token, a maximum amount and optionally
///         a witness (extra typed data the spender vouches for, e.g. x402's recipient and facilitator).
/// @dev Compatible with Uniswap's Permit2 `SignatureTransfer` for the single-token witness transfer: same EIP-712
///      domain (name "Permit2", chain id, verifying contract; no version), same permit hashing, same unordered nonces
///      and error names. The devnet places the runtime code at Permit2's canonical address with `hardhat_setCode`, so
///      there is no constructor and no immutable: the domain separator is computed on every use.
///      Not included: the allowance-based transfers, batch permits and the witness-less `permitTransferFrom`.
contract Permit2 is ISignatureTransfer {
    using SafeERC20 for IERC20;

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,uint256 chainId,address verifyingContract)");
    bytes32 private constant DOMAIN_NAME_HASH = keccak256("Permit2");
    bytes32 private constant TOKEN_PERMISSIONS_TYPEHASH = keccak256("TokenPermissions(address token,uint256 amount)");
    /// @dev The witness transfer's type string up to its last member; the caller's `witnessTypeString` completes it
    ///      (`<WitnessType> <name>)` followed by the referenced types in EIP-712 order, TokenPermissions included).
    string private constant WITNESS_PERMIT_TYPE_PREFIX =
        "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";

    /// @inheritdoc ISignatureTransfer
    mapping(address owner => mapping(uint256 wordPos => uint256 bits)) public nonceBitmap;

    /// @notice The permit's deadline has passed.
    error SignatureExpired(uint256 signatureDeadline);
    /// @notice The permit's nonce was used or invalidated before.
    error InvalidNonce();
    /// @notice An owner without code must sign with 65 bytes (r, s, v) or 64 (EIP-2098 r, vs).
    error InvalidSignatureLength();
    /// @notice The signature recovers to no address (or a malleable high-s form).
    error InvalidSignature();
    /// @notice The signature recovers to someone other than the owner.
    error InvalidSigner();
    /// @notice An owner with code refused the signature (EIP-1271).
    error InvalidContractSignature();

    /// @inheritdoc ISignatureTransfer
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, DOMAIN_NAME_HASH, block.chainid, address(this)));
    }

    /// @inheritdoc ISignatureTransfer
    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external {
        if (block.timestamp > permit.deadline) revert SignatureExpired(permit.deadline);
        if (transferDetails.requestedAmount > permit.permitted.amount) revert InvalidAmount(permit.permitted.amount);
        // The nonce is spent before the token is called, so a reentrant call cannot use the permit again.
        _useNonce(owner, permit.nonce);
        _checkSignature(owner, _witnessDigest(permit, witness, witnessTypeString), signature);
        IERC20(permit.permitted.token).safeTransferFrom(owner, transferDetails.to, transferDetails.requestedAmount);
    }

    /// @inheritdoc ISignatureTransfer
    function invalidateUnorderedNonces(uint256 wordPos, uint256 mask) external {
        nonceBitmap[msg.sender][wordPos] |= mask;
        emit UnorderedNonceInvalidation(msg.sender, wordPos, mask);
    }

    /// @dev The EIP-712 digest the owner signed; the caller is the permit's spender.
    function _witnessDigest(PermitTransferFrom calldata permit, bytes32 witness, string calldata witnessTypeString)
        private
        view
        returns (bytes32)
    {
        bytes32 typeHash = keccak256(abi.encodePacked(WITNESS_PERMIT_TYPE_PREFIX, witnessTypeString));
        bytes32 permitted =
            keccak256(abi.encode(TOKEN_PERMISSIONS_TYPEHASH, permit.permitted.token, permit.permitted.amount));
        bytes32 structHash = keccak256(abi.encode(typeHash, permitted, msg.sender, permit.nonce, permit.deadline, witness));
        return MessageHashUtils.toTypedDataHash(DOMAIN_SEPARATOR(), structHash);
    }

    /// @dev Nonces are unordered: bit `nonce & 0xff` of word `nonce >> 8`, each usable once.
    function _useNonce(address owner, uint256 nonce) private {
        uint256 wordPos = nonce >> 8;
        uint256 bit = 1 << (nonce & 0xff);
        uint256 word = nonceBitmap[owner][wordPos];
        if (word & bit != 0) revert InvalidNonce();
        nonceBitmap[owner][wordPos] = word | bit;
    }

    function _checkSignature(address owner, bytes32 digest, bytes calldata signature) private view {
        if (owner.code.length != 0) {
            // Smart accounts (and delegated EOAs) answer for their signatures themselves.
            if (!SignatureChecker.isValidERC1271SignatureNowCalldata(owner, digest, signature)) {
                revert InvalidContractSignature();
            }
            return;
        }
        address signer;
        ECDSA.RecoverError error_;
        if (signature.length == 65) {
            (signer, error_,) = ECDSA.tryRecoverCalldata(digest, signature);
        } else if (signature.length == 64) {
            (signer, error_,) = ECDSA.tryRecover(digest, bytes32(signature[0:32]), bytes32(signature[32:64]));
        } else {
            revert InvalidSignatureLength();
        }
        if (error_ != ECDSA.RecoverError.NoError) revert InvalidSignature();
        if (signer != owner) revert InvalidSigner();
    }
}
