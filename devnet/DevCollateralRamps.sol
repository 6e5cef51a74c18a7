// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// What the ramps need of the devnet's ERC-20s (TestUSDC, TestToken): `mint` is open on both.
interface IDevRampToken {
    function balanceOf(address owner) external view returns (uint256);
    function transfer(address to, uint256 value) external returns (bool);
    function transferFrom(address from, address to, uint256 value) external returns (bool);
    function mint(address to, uint256 amount) external returns (bool);
}

/// Per-asset pause and the errors both ramps share. Names and selectors are those of Polymarket's
/// ramps (`paused(address)`, `pause(address)`, `unpause(address)`, `Paused(address)`,
/// `Unpaused(address)`, `OnlyUnpaused()`, `InvalidAsset()`); who may pause is simpler here: the
/// one admin given at construction (the devnet's ramp admin key), no role management, no owner.
abstract contract DevRampPausable {
    error OnlyUnpaused();
    error InvalidAsset();
    error NotAdmin();
    error TransferFailed();

    event Paused(address indexed asset);
    event Unpaused(address indexed asset);

    address public immutable admin;
    /// pUSD, the devnet's Polymarket USD look-alike (TestToken: open `mint`, no `burn`).
    address public immutable COLLATERAL_TOKEN;
    address public immutable usdc;
    address public immutable usdce;

    mapping(address => bool) public paused;

    constructor(address _admin, address _collateralToken, address _usdc, address _usdce) {
        admin = _admin;
        COLLATERAL_TOKEN = _collateralToken;
        usdc = _usdc;
        usdce = _usdce;
    }

    modifier onlyAdmin() {
        if (msg.sender != admin) revert NotAdmin();
        _;
    }

    /// Refuses an asset that is neither USDC nor USDC.e (InvalidAsset) or that is paused (OnlyUnpaused).
    modifier onlyUsableAsset(address _asset) {
        if (_asset != usdc && _asset != usdce) revert InvalidAsset();
        if (paused[_asset]) revert OnlyUnpaused();
        _;
    }

    function pause(address _asset) external onlyAdmin {
        paused[_asset] = true;
        emit Paused(_asset);
    }

    function unpause(address _asset) external onlyAdmin {
        paused[_asset] = false;
        emit Unpaused(_asset);
    }

    function _pull(address token, address from, address to, uint256 amount) internal {
        if (!IDevRampToken(token).transferFrom(from, to, amount)) revert TransferFailed();
    }

    function _send(address token, address to, uint256 amount) internal {
        if (!IDevRampToken(token).transfer(to, amount)) revert TransferFailed();
    }
}

/// Purser's own devnet contract with the public interface of Polymarket's CollateralOnramp:
/// `wrap(address _asset, address _to, uint256 _amount)` (0x62355638) takes `_amount` of `_asset`
/// (USDC.e or USDC; approve this contract, not pUSD) from the caller with `transferFrom` and
/// gives `_to` the same amount of pUSD. Not Polymarket's code, and not its design: Polymarket's
/// onramp hands the asset to the CollateralToken, which mints under a wrapper role and parks the
/// asset in a vault. Here this contract is the vault: it keeps the wrapped USDC.e/USDC as the
/// reserve, and pays pUSD first from the pUSD the offramp returned to it, minting the rest with
/// the devnet pUSD's open `mint` (pUSD has no burn, so unwrapped pUSD comes back here and is used
/// again; pUSD held by this contract is out of circulation). The event `Wrapped` is the devnet's
/// own, not Polymarket's. Never deploy this outside a local devnet.
contract DevCollateralOnramp is DevRampPausable {
    /// The devnet's own event: `sender` paid `amount` of `asset`, `to` got `amount` pUSD.
    event Wrapped(address indexed sender, address indexed asset, address indexed to, uint256 amount);

    error NotOfframp();

    /// The only caller of `release` (DevCollateralOfframp, deployed right after this contract).
    address public immutable offramp;

    constructor(
        address _admin,
        address _collateralToken,
        address _usdc,
        address _usdce,
        address _offramp
    ) DevRampPausable(_admin, _collateralToken, _usdc, _usdce) {
        offramp = _offramp;
    }

    function wrap(address _asset, address _to, uint256 _amount) external onlyUsableAsset(_asset) {
        _pull(_asset, msg.sender, address(this), _amount);
        uint256 held = IDevRampToken(COLLATERAL_TOKEN).balanceOf(address(this));
        uint256 fromFloat = held < _amount ? held : _amount;
        if (fromFloat > 0) _send(COLLATERAL_TOKEN, _to, fromFloat);
        if (_amount > fromFloat) {
            if (!IDevRampToken(COLLATERAL_TOKEN).mint(_to, _amount - fromFloat)) revert TransferFailed();
        }
        emit Wrapped(msg.sender, _asset, _to, _amount);
    }

    /// Pays `_amount` of `_asset` out of the reserve; only for the offramp, after it moved the
    /// same amount of pUSD here.
    function release(address _asset, address _to, uint256 _amount) external {
        if (msg.sender != offramp) revert NotOfframp();
        _send(_asset, _to, _amount);
    }
}

/// Purser's own devnet contract with the public interface of Polymarket's CollateralOfframp:
/// `unwrap(address _asset, address _to, uint256 _amount)` (0x8cc7104f) takes `_amount` pUSD from
/// the caller with `transferFrom` (approve this contract) and gives `_to` the same amount of
/// `_asset` (USDC.e or USDC) from the onramp's reserve; it reverts when the reserve holds less.
/// The pUSD goes to the onramp, which pays it out again on the next wrap. The event `Unwrapped`
/// is the devnet's own, not Polymarket's. Never deploy this outside a local devnet.
contract DevCollateralOfframp is DevRampPausable {
    /// The devnet's own event: `sender` paid `amount` pUSD, `to` got `amount` of `asset`.
    event Unwrapped(address indexed sender, address indexed asset, address indexed to, uint256 amount);

    address public immutable onramp;

    constructor(
        address _admin,
        address _collateralToken,
        address _usdc,
        address _usdce,
        address _onramp
    ) DevRampPausable(_admin, _collateralToken, _usdc, _usdce) {
        onramp = _onramp;
    }

    function unwrap(address _asset, address _to, uint256 _amount) external onlyUsableAsset(_asset) {
        _pull(COLLATERAL_TOKEN, msg.sender, onramp, _amount);
        DevCollateralOnramp(onramp).release(_asset, _to, _amount);
        emit Unwrapped(msg.sender, _asset, _to, _amount);
    }
}
