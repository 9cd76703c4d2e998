// SPDX-License-Identifier: MIT
pragma solidity ^0.8.26;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC3009} from "@openzeppelin/contracts/token/ERC20/extensions/draft-ERC3009.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title USD Coin (local payment token)
/// @notice ERC-20 with 6 decimals and EIP-3009 transfer/receive/cancel with authorization, shaped like Base's
///         USDC (FiatToken v2.2) as the x402 `exact` EVM scheme uses it: EIP-712 domain ("USD Coin", "2"),
///         random 32-byte nonces, `(v, r, s)` and `bytes signature` overloads (the latter also accepts ERC-1271
///         signatures of contract wallets), `authorizationState`, `version()` and `DOMAIN_SEPARATOR()`.
///         A used (or canceled) authorization nonce reverts with `ERC3009UsedAuthorization`.
contract UsdToken is ERC20, EIP712, ERC3009, Ownable {
    string public constant EIP712_VERSION = "2";

    constructor(address initialOwner) ERC20("USD Coin", "USDC") EIP712("USD Coin", EIP712_VERSION) Ownable(initialOwner) {}

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice EIP-712 domain version, as USDC exposes it.
    function version() external pure returns (string memory) {
        return EIP712_VERSION;
    }

    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }

    /// @notice Mints `amount` to every account of `to` (seeding).
    function mintBatch(address[] calldata to, uint256 amount) external onlyOwner {
        for (uint256 i; i < to.length; ++i) {
            _mint(to[i], amount);
        }
    }

    /// @notice `transferWithAuthorization` with a packed ECDSA signature or an ERC-1271 signature.
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external {
        bytes32 hash = _hashTypedDataV4(
            keccak256(abi.encode(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce))
        );
        if (!SignatureChecker.isValidSignatureNow(from, hash, signature)) revert ERC3009InvalidSignature();
        _transferWithAuthorization(from, to, value, validAfter, validBefore, nonce);
    }

    /// @notice `receiveWithAuthorization` with a packed ECDSA signature or an ERC-1271 signature.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external {
        bytes32 hash = _hashTypedDataV4(
            keccak256(abi.encode(RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce))
        );
        if (!SignatureChecker.isValidSignatureNow(from, hash, signature)) revert ERC3009InvalidSignature();
        if (to != _msgSender()) revert ERC20InvalidReceiver(to);
        _transferWithAuthorization(from, to, value, validAfter, validBefore, nonce);
    }

    /// @notice `cancelAuthorization` with a packed ECDSA signature or an ERC-1271 signature.
    function cancelAuthorization(address authorizer, bytes32 nonce, bytes calldata signature) external {
        bytes32 hash = _hashTypedDataV4(keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce)));
        if (!SignatureChecker.isValidSignatureNow(authorizer, hash, signature)) revert ERC3009InvalidSignature();
        _cancelAuthorization(authorizer, nonce);
    }
}
