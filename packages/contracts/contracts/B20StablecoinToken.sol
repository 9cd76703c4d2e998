// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {B20Token} from "./B20Token.sol";

/// @title B20 token, Stablecoin variant (devnet stand-in)
/// @notice `IB20Stablecoin` (base/base-std `src/interfaces/IB20Stablecoin.sol`, commit
///         d4b531cde26e920b4166025c2502c5674fa42de6; signatures in `test/published/base-std-b20.json`): the B20
///         token surface plus the immutable `currency()` code. Asset-variant tokens have no `currency()`.
contract B20StablecoinToken is B20Token {
    /// @notice The currency code this stablecoin tracks (e.g. `"USD"`).
    function currency() external view returns (string memory) {
        return _currency;
    }
}
