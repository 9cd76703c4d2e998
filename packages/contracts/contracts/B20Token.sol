// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @dev What a token asks the factory during its creation window.
interface IB20FactoryView {
    function isB20Initialized(address token) external view returns (bool);
}

/// @title B20 token, Asset variant (devnet stand-in)
/// @notice The part of `IB20` (base/base-std `src/interfaces/IB20.sol`, commit
///         d4b531cde26e920b4166025c2502c5674fa42de6; signatures in `test/published/base-std-b20.json`) the service
///         and its tests use: ERC-20 with IB20's errors, `mint` under `MINT_ROLE`, and the role functions. Like
///         real B20 tokens it has no `variant()` getter (the variant is byte 10 of its address) and no
///         `initialized()`: whether a token was created is the factory's `isB20Initialized`. `currency()` exists on
///         the Stablecoin variant only (`B20StablecoinToken`).
///
/// @dev DEVNET ONLY. Real B20 tokens are native precompiles at `0xB200…` addresses, which no CREATE/CREATE2 can
///      produce. The devnet places this contract's *runtime* code at the address the factory derives, with
///      `hardhat_setCode`, and the factory's `createB20` calls `bootstrap` (devnet-only) to set its identity, then
///      runs its init calls, during which the factory may mint. The constructor never runs there: all state is
///      written by `bootstrap`, and the contract has no immutables.
contract B20Token {
    address internal constant FACTORY = 0xB20f000000000000000000000000000000000000;
    bytes32 public constant DEFAULT_ADMIN_ROLE = 0x00;
    bytes32 public constant MINT_ROLE = keccak256("MINT_ROLE");

    error AccessControlUnauthorizedAccount(address account, bytes32 neededRole);
    error InsufficientAllowance(address spender, uint256 allowance, uint256 needed);
    error InsufficientBalance(address sender, uint256 balance, uint256 needed);
    error InvalidSender(address sender);
    error InvalidReceiver(address receiver);
    error InvalidApprover(address approver);
    error InvalidSpender(address spender);
    /// @notice DEVNET ONLY: `bootstrap` is the factory's, once.
    error BootstrapRefused();

    event Transfer(address indexed from, address indexed to, uint256 amount);
    event Approval(address indexed owner, address indexed spender, uint256 amount);
    event RoleGranted(bytes32 indexed role, address indexed account, address indexed sender);
    event RoleRevoked(bytes32 indexed role, address indexed account, address indexed sender);

    string private _name;
    string private _symbol;
    uint8 private _decimals;
    bool private _bootstrapped;
    string internal _currency;
    uint256 private _totalSupply;
    mapping(address account => uint256 balance) private _balances;
    mapping(address owner => mapping(address spender => uint256 amount)) private _allowances;
    mapping(bytes32 role => mapping(address account => bool member)) private _roles;

    /// @notice DEVNET ONLY: the token's identity, set by the factory while it creates the token.
    function bootstrap(string calldata name_, string calldata symbol_, uint8 decimals_, string calldata currency_, address admin)
        external
    {
        if (msg.sender != FACTORY || _bootstrapped) revert BootstrapRefused();
        _bootstrapped = true;
        (_name, _symbol, _decimals, _currency) = (name_, symbol_, decimals_, currency_);
        if (admin != address(0)) _grant(DEFAULT_ADMIN_ROLE, admin);
    }

    function name() external view returns (string memory) {
        return _name;
    }

    function symbol() external view returns (string memory) {
        return _symbol;
    }

    function decimals() external view returns (uint8) {
        return _decimals;
    }

    function totalSupply() external view returns (uint256) {
        return _totalSupply;
    }

    function balanceOf(address account) external view returns (uint256) {
        return _balances[account];
    }

    function allowance(address owner, address spender) external view returns (uint256) {
        return _allowances[owner][spender];
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _transfer(msg.sender, to, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = _allowances[from][msg.sender];
        if (allowed < amount) revert InsufficientAllowance(msg.sender, allowed, amount);
        if (allowed != type(uint256).max) _allowances[from][msg.sender] = allowed - amount;
        _transfer(from, to, amount);
        return true;
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        if (msg.sender == address(0)) revert InvalidApprover(msg.sender);
        if (spender == address(0)) revert InvalidSpender(spender);
        _allowances[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    /// @notice Mints `amount` to `to`: `MINT_ROLE`, or the factory while it creates the token.
    function mint(address to, uint256 amount) external {
        _checkRole(MINT_ROLE);
        if (to == address(0)) revert InvalidReceiver(to);
        _totalSupply += amount;
        _balances[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function hasRole(bytes32 role, address account) public view returns (bool) {
        return _roles[role][account];
    }

    function grantRole(bytes32 role, address account) external {
        _checkRole(DEFAULT_ADMIN_ROLE);
        _grant(role, account);
    }

    function revokeRole(bytes32 role, address account) external {
        _checkRole(DEFAULT_ADMIN_ROLE);
        if (_roles[role][account]) {
            _roles[role][account] = false;
            emit RoleRevoked(role, account, msg.sender);
        }
    }

    function _transfer(address from, address to, uint256 amount) internal {
        if (from == address(0)) revert InvalidSender(from);
        if (to == address(0)) revert InvalidReceiver(to);
        uint256 balance = _balances[from];
        if (balance < amount) revert InsufficientBalance(from, balance, amount);
        _balances[from] = balance - amount;
        _balances[to] += amount;
        emit Transfer(from, to, amount);
    }

    /// @dev Role gates are open to the factory during the creation window (until `isB20Initialized`), as on Base.
    function _checkRole(bytes32 role) internal view {
        if (_roles[role][msg.sender]) return;
        if (msg.sender == FACTORY && !IB20FactoryView(FACTORY).isB20Initialized(address(this))) return;
        revert AccessControlUnauthorizedAccount(msg.sender, role);
    }

    function _grant(bytes32 role, address account) internal {
        if (!_roles[role][account]) {
            _roles[role][account] = true;
            emit RoleGranted(role, account, msg.sender);
        }
    }
}
