// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @dev The devnet-only part of a B20 token the factory calls while it creates the token (see `B20Token`).
interface IB20TokenBootstrap {
    function bootstrap(string calldata name_, string calldata symbol_, uint8 decimals_, string calldata currency_, address admin)
        external;
}

/// @title B20 factory (devnet stand-in for Base's factory precompile)
/// @notice The surface of `IB20Factory` as published in base/base-std (`src/interfaces/IB20Factory.sol`, commit
///         d4b531cde26e920b4166025c2502c5674fa42de6; signatures in `test/published/base-std-b20.json`): `createB20`
///         with its errors and `B20Created` event, and the address queries `getB20Address`, `isB20` and
///         `isB20Initialized`.
///
/// @dev DEVNET ONLY. On Base the factory is a native precompile at `0xB20f000000000000000000000000000000000000`
///      whose `createB20` puts a token at `[10-byte 0xB200000000000000000000 prefix][1-byte variant][9 bytes of
///      keccak256(abi.encode(sender, salt))]`. No EVM contract can create code at such an address, so on the devnet
///      this contract's runtime code is placed at `0xB20f…` with `hardhat_setCode`, and before each `createB20`
///      the creator places the variant's token code (`B20Token` or `B20StablecoinToken`) at the address
///      `getB20Address` gives, with `hardhat_setCode`; `createB20` then checks and initialises it as the
///      precompile would. The one devnet-only error, `TokenCodeMissing`, is for a creator that did not.
///      The variant is a `uint8` here: the same selectors and topics as the published `B20Variant` enum, and an
///      out-of-range value reverts with `InvalidVariant()` as published (an enum parameter would panic instead).
contract B20Factory {
    uint8 internal constant ASSET = 0;
    uint8 internal constant STABLECOIN = 1;
    uint8 internal constant CREATE_PARAMS_VERSION = 1;
    uint8 internal constant STABLECOIN_EVENT_PARAMS_VERSION = 1;
    bytes10 internal constant B20_PREFIX = bytes10(0xB2000000000000000000);

    /// @notice Creation parameters of a Stablecoin-variant token, ABI-encoded into `params`.
    struct B20StablecoinCreateParams {
        uint8 version;
        string name;
        string symbol;
        address initialAdmin;
        string currency;
    }

    /// @notice Creation parameters of an Asset-variant token, ABI-encoded into `params`.
    struct B20AssetCreateParams {
        uint8 version;
        string name;
        string symbol;
        address initialAdmin;
        uint8 decimals;
    }

    /// @notice `variantEventParams` of `B20Created` for a stablecoin.
    struct B20StablecoinEventParams {
        uint8 version;
        string currency;
    }

    error NonPayable();
    error TokenAlreadyExists(address token);
    error InvalidVariant();
    error UnsupportedVersion(uint8 version, uint8 variant);
    error MissingRequiredField(string field);
    error InvalidCurrency(string code);
    error InvalidDecimals(uint8 decimals);
    error InitCallFailed(uint256 index);
    /// @notice DEVNET ONLY: no token code was placed at the address `createB20` derives.
    error TokenCodeMissing(address token);

    event B20Created(
        address indexed token, uint8 indexed variant, string name, string symbol, uint8 decimals, bytes variantEventParams
    );

    mapping(address token => bool initialized) private _initialized;

    /// @notice Creates a token of `variant` at the address derived from `(variant, msg.sender, salt)`, emits
    ///         `B20Created`, then runs each of `initCalls` on the new token (during which the factory may call its
    ///         role-gated functions, such as `mint`).
    function createB20(uint8 variant, bytes32 salt, bytes calldata params, bytes[] calldata initCalls)
        external
        payable
        returns (address token)
    {
        if (msg.value != 0) revert NonPayable();
        if (variant > STABLECOIN) revert InvalidVariant();
        token = getB20Address(variant, msg.sender, salt);
        if (_initialized[token]) revert TokenAlreadyExists(token);
        if (token.code.length == 0) revert TokenCodeMissing(token);

        string memory name;
        string memory symbol;
        uint8 decimals;
        string memory currency;
        address admin;
        bytes memory eventParams;
        if (variant == STABLECOIN) {
            B20StablecoinCreateParams memory p = abi.decode(params, (B20StablecoinCreateParams));
            if (p.version != CREATE_PARAMS_VERSION) revert UnsupportedVersion(p.version, variant);
            (name, symbol, decimals, currency, admin) = (p.name, p.symbol, 6, p.currency, p.initialAdmin);
            if (bytes(currency).length == 0) revert MissingRequiredField("currency");
            _checkCurrency(currency);
            eventParams = abi.encode(B20StablecoinEventParams(STABLECOIN_EVENT_PARAMS_VERSION, currency));
        } else {
            B20AssetCreateParams memory p = abi.decode(params, (B20AssetCreateParams));
            if (p.version != CREATE_PARAMS_VERSION) revert UnsupportedVersion(p.version, variant);
            (name, symbol, decimals, admin) = (p.name, p.symbol, p.decimals, p.initialAdmin);
            if (decimals < 6 || decimals > 18) revert InvalidDecimals(decimals);
        }
        if (bytes(name).length == 0) revert MissingRequiredField("name");
        if (bytes(symbol).length == 0) revert MissingRequiredField("symbol");

        IB20TokenBootstrap(token).bootstrap(name, symbol, decimals, currency, admin);
        emit B20Created(token, variant, name, symbol, decimals, eventParams);
        for (uint256 i; i < initCalls.length; ++i) {
            (bool ok, bytes memory reason) = token.call(initCalls[i]);
            if (!ok) {
                if (reason.length == 0) revert InitCallFailed(i);
                assembly {
                    revert(add(reason, 32), mload(reason))
                }
            }
        }
        _initialized[token] = true;
    }

    /// @notice The address `createB20` derives for `(variant, sender, salt)`:
    ///         prefix ++ variant byte ++ bytes9(keccak256(abi.encode(sender, salt))). Never reverts.
    function getB20Address(uint8 variant, address sender, bytes32 salt) public pure returns (address) {
        bytes9 tail = bytes9(keccak256(abi.encode(sender, salt)));
        return address(bytes20(abi.encodePacked(B20_PREFIX, bytes1(variant), tail)));
    }

    /// @notice Whether `token` has the B20 address form (prefix check only). Never reverts.
    function isB20(address token) external pure returns (bool) {
        return bytes10(bytes20(token)) == B20_PREFIX;
    }

    /// @notice Whether `createB20` has run to completion at `token`. Never reverts.
    function isB20Initialized(address token) external view returns (bool) {
        return _initialized[token];
    }

    /// @dev Uppercase ASCII `A`-`Z` only.
    function _checkCurrency(string memory code) internal pure {
        bytes memory b = bytes(code);
        for (uint256 i; i < b.length; ++i) {
            if (b[i] < 0x41 || b[i] > 0x5A) revert InvalidCurrency(code);
        }
    }
}
