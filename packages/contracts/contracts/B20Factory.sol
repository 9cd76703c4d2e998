// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @dev The part of the devnet B20 token the factory calls.
interface IB20TokenInit {
    function initialize(
        string calldata name_,
        string calldata symbol_,
        uint8 decimals_,
        string calldata currency_,
        uint256 initialSupply,
        address holder
    ) external;

    function initialized() external view returns (bool);
}

/// @title B20 factory surface (devnet stand-in for Base's factory precompile)
/// @notice Emits `B20Created` for every token and answers the factory's read functions.
///
/// @dev DEVNET ONLY. On Base the factory is a native precompile at `0xB20f000000000000000000000000000000000000`
///      whose `createB20` puts a token at `[10-byte 0xB200000000000000000000 prefix][1-byte variant][9 bytes]`.
///      No EVM contract can create code at a chosen address, so on the devnet:
///        1. the devnet places this contract's runtime code at `0xB20f…` with `hardhat_setCode` and calls
///           `initialize(operator)` once (the constructor never runs there; the contract has no immutables and
///           no constructor-set state);
///        2. for each token it places `B20Token`'s runtime code at an address of the B20 form (for example
///           `getB20Address(variant, creator, salt)`) with `hardhat_setCode`;
///        3. the operator calls `registerToken(...)`, which checks the address form, initialises the token and
///           emits `B20Created` exactly as the precompile would.
///      Variants: ASSET = 0 (`variantParams` empty, decimals 6..18), STABLECOIN = 1
///      (`variantParams = abi.encode(string currency)`, three uppercase ASCII letters, decimals 6).
contract B20Factory {
    uint8 public constant ASSET = 0;
    uint8 public constant STABLECOIN = 1;
    bytes10 public constant B20_PREFIX = bytes10(0xB2000000000000000000);

    event B20Created(
        address indexed token, uint8 indexed variant, string name, string symbol, uint8 decimals, bytes variantParams
    );
    event OperatorChanged(address indexed previousOperator, address indexed newOperator);

    error AlreadyInitialized();
    error NotOperator(address caller);
    error InvalidOperator();
    error InvalidVariant(uint8 variant);
    error NotB20Address(address token);
    error VariantMismatch(address token, uint8 variant);
    error TokenCodeMissing(address token);
    error TokenAlreadyExists(address token);
    error MissingRequiredField();
    error InvalidCurrency(string code);
    error InvalidDecimals(uint8 decimals);

    address public operator;
    address[] private _tokens;
    mapping(address token => bool registered) private _registered;

    modifier onlyOperator() {
        if (msg.sender != operator) revert NotOperator(msg.sender);
        _;
    }

    /// @notice Sets the operator once (the devnet's replacement for a constructor).
    function initialize(address operator_) external {
        if (operator != address(0)) revert AlreadyInitialized();
        if (operator_ == address(0)) revert InvalidOperator();
        operator = operator_;
        emit OperatorChanged(address(0), operator_);
    }

    function setOperator(address newOperator) external onlyOperator {
        if (newOperator == address(0)) revert InvalidOperator();
        emit OperatorChanged(operator, newOperator);
        operator = newOperator;
    }

    /// @notice Records a token whose runtime code the devnet placed at `token`, initialises it (minting
    ///         `initialSupply` to `holder`) and emits `B20Created`.
    function registerToken(
        address token,
        uint8 variant,
        string calldata name,
        string calldata symbol,
        uint8 decimals,
        bytes calldata variantParams,
        uint256 initialSupply,
        address holder
    ) external onlyOperator {
        if (variant > STABLECOIN) revert InvalidVariant(variant);
        if (!isB20(token)) revert NotB20Address(token);
        if (uint8(bytes20(token)[10]) != variant) revert VariantMismatch(token, variant);
        if (token.code.length == 0) revert TokenCodeMissing(token);
        if (_registered[token] || IB20TokenInit(token).initialized()) revert TokenAlreadyExists(token);
        if (bytes(name).length == 0 || bytes(symbol).length == 0) revert MissingRequiredField();

        string memory currency;
        if (variant == STABLECOIN) {
            currency = abi.decode(variantParams, (string));
            _checkCurrency(currency);
            if (decimals != 6) revert InvalidDecimals(decimals);
        } else if (decimals < 6 || decimals > 18) {
            revert InvalidDecimals(decimals);
        }

        _registered[token] = true;
        _tokens.push(token);
        IB20TokenInit(token).initialize(name, symbol, decimals, currency, initialSupply, holder);
        emit B20Created(token, variant, name, symbol, decimals, variantParams);
    }

    /// @notice Whether `token` has the B20 address form (prefix check only, like the precompile; never reverts).
    function isB20(address token) public pure returns (bool) {
        return bytes10(bytes20(token)) == B20_PREFIX;
    }

    /// @notice Whether `token` was created (registered and initialised) by this factory.
    function isB20Initialized(address token) external view returns (bool) {
        return _registered[token];
    }

    /// @notice The address `createB20` derives for `(variant, sender, salt)`:
    ///         prefix ++ variant byte ++ bytes9(keccak256(abi.encode(sender, salt))).
    function getB20Address(uint8 variant, address sender, bytes32 salt) external pure returns (address) {
        bytes9 tail = bytes9(keccak256(abi.encode(sender, salt)));
        return address(bytes20(abi.encodePacked(B20_PREFIX, bytes1(variant), tail)));
    }

    /// @notice Number of tokens created.
    function tokenCount() external view returns (uint256) {
        return _tokens.length;
    }

    /// @notice The `index`-th token created.
    function tokenAt(uint256 index) external view returns (address) {
        return _tokens[index];
    }

    /// @notice Tokens `offset .. offset + limit - 1` in creation order (fewer at the end).
    function tokens(uint256 offset, uint256 limit) external view returns (address[] memory page) {
        uint256 total = _tokens.length;
        if (offset >= total) return page;
        uint256 end = offset + limit > total ? total : offset + limit;
        page = new address[](end - offset);
        for (uint256 i = offset; i < end; ++i) {
            page[i - offset] = _tokens[i];
        }
    }

    function _checkCurrency(string memory code) internal pure {
        bytes memory b = bytes(code);
        if (b.length != 3) revert InvalidCurrency(code);
        for (uint256 i; i < 3; ++i) {
            if (b[i] < 0x41 || b[i] > 0x5A) revert InvalidCurrency(code);
        }
    }
}
