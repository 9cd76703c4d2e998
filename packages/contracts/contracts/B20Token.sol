// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title B20 token (devnet stand-in)
/// @notice ERC-20 with the B20 read surface the radar uses: `currency()` (the stablecoin's ISO code, empty for
///         assets) and `initialized()`. Like real B20 tokens it has no `variant()` getter: the variant is byte
///         10 of the token's address (`0xB200000000000000000000` prefix, then the variant byte).
///
/// @dev DEVNET ONLY. Real B20 tokens are native precompiles at `0xB200…` addresses, which no CREATE/CREATE2
///      can produce. The devnet places this contract's *runtime* code at such an address with
///      `hardhat_setCode` and then has `B20Factory.registerToken` call `initialize`. Because the constructor
///      never runs there, all state (name, symbol, decimals, currency, supply) is written by `initialize`,
///      which succeeds exactly once; the contract uses no immutables.
contract B20Token is ERC20 {
    error AlreadyInitialized();

    event Initialized(address indexed factory, string name, string symbol, uint8 decimals, string currency);

    string private _tokenName;
    string private _tokenSymbol;
    string private _currency;
    uint8 private _tokenDecimals;
    bool private _initialized;
    address private _factory;

    constructor() ERC20("", "") {}

    /// @notice Sets the token's identity and mints `initialSupply` to `holder`; callable once (by the factory).
    function initialize(
        string calldata name_,
        string calldata symbol_,
        uint8 decimals_,
        string calldata currency_,
        uint256 initialSupply,
        address holder
    ) external {
        if (_initialized) revert AlreadyInitialized();
        _initialized = true;
        _factory = msg.sender;
        _tokenName = name_;
        _tokenSymbol = symbol_;
        _tokenDecimals = decimals_;
        _currency = currency_;
        emit Initialized(msg.sender, name_, symbol_, decimals_, currency_);
        if (initialSupply != 0) _mint(holder, initialSupply);
    }

    function name() public view override returns (string memory) {
        return _tokenName;
    }

    function symbol() public view override returns (string memory) {
        return _tokenSymbol;
    }

    function decimals() public view override returns (uint8) {
        return _tokenDecimals;
    }

    /// @notice ISO-4217-shaped currency code of a stablecoin; empty for assets.
    function currency() external view returns (string memory) {
        return _currency;
    }

    function initialized() external view returns (bool) {
        return _initialized;
    }

    /// @notice The factory that initialised this token.
    function factory() external view returns (address) {
        return _factory;
    }
}
