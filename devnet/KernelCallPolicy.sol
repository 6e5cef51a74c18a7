// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {PackedUserOperation, KernelPolicyBase} from "./KernelModuleBase.sol";

/// Devnet call policy for ZeroDev Kernel v3 permissions (module type 5 = policy), written for
/// Purser: no npm package ships the bytecode of ZeroDev's module.
///
/// Interface origin: ZeroDev's `CallPolicy` (zerodevapp/kernel-7579-plugins,
/// policies/call-policy/src/CallPolicy.sol, v0.0.4 at 0x9a52283276A0ec8740DF50bF01B28A80D880eaf2
/// per the SDK) on Kernel's `PolicyBase`, with EntryPoint v0.7's PackedUserOperation and ERC-7579's
/// `execute(bytes32 mode, bytes executionCalldata)`.
/// - `onInstall(bytes32 permissionId ‖ abi.encode(Permission[]))` from the account, Permission =
///   (bytes1 callType, address target, bytes4 selector, uint256 valueLimit, ParamRule[] rules);
///   status NA → Live → Deprecated, installing needs NA; a repeated (callType, target, selector)
///   reverts. Parameter rules are not supported here: a permission with rules reverts
///   (`ParamRulesUnsupported`) rather than install a looser grant than it says.
/// - `checkUserOpPolicy`: userOp.callData must be `execute` (0xe9ae5c53). A single call
///   (callType 0x00: target(20) ‖ value(32) ‖ data) and each item of a batch (0x01:
///   abi.encode((address,uint256,bytes)[])) is looked up as callType 0x00 by (target, the data's
///   first 4 bytes or 0x00000000 when empty), then with target 0 (any target); a delegatecall
///   (0xff: target(20) ‖ data) as callType 0xff with value 0. No entry: `InvalidCallData`; value
///   over the limit: `CallViolatesValueRule`; a call to the account itself: `CallToAccount`; other
///   call types: `InvalidCallType`. Violations revert, as ZeroDev's do; a permitted op answers 0.
/// - `checkSignaturePolicy`: 0 when live, else 1 (no call rules for ERC-1271 signatures).
contract KernelCallPolicy is KernelPolicyBase {
    struct ParamRule {
        uint8 condition;
        uint64 offset;
        bytes32[] params;
    }

    struct Permission {
        bytes1 callType;
        address target;
        bytes4 selector;
        uint256 valueLimit;
        ParamRule[] rules;
    }

    struct Execution {
        address target;
        uint256 value;
        bytes callData;
    }

    struct Grant {
        bool allowed;
        uint256 valueLimit;
    }

    bytes4 private constant EXECUTE_SELECTOR = 0xe9ae5c53;
    bytes1 private constant CALLTYPE_SINGLE = 0x00;
    bytes1 private constant CALLTYPE_BATCH = 0x01;
    bytes1 private constant CALLTYPE_DELEGATECALL = 0xff;

    /// Grants by keccak256(callType ‖ target ‖ selector); the account is the inner key (ERC-7562).
    mapping(bytes32 id => mapping(bytes32 permissionHash => mapping(address wallet => Grant))) public grants;
    /// The permission hashes of (id, account), for uninstalling.
    mapping(bytes32 id => mapping(address wallet => bytes32[])) private hashes;

    error DuplicatePermission(bytes32 permissionHash);
    error ParamRulesUnsupported();
    error InvalidCallType();
    error InvalidCallData();
    error CallViolatesValueRule();
    error CallToAccount();

    function _install(bytes32 id, bytes calldata data) internal override {
        Permission[] memory permissions = abi.decode(data, (Permission[]));
        for (uint256 i = 0; i < permissions.length; i++) {
            Permission memory p = permissions[i];
            if (p.rules.length != 0) revert ParamRulesUnsupported();
            bytes32 h = keccak256(abi.encodePacked(p.callType, p.target, p.selector));
            if (grants[id][h][msg.sender].allowed) revert DuplicatePermission(h);
            grants[id][h][msg.sender] = Grant(true, p.valueLimit);
            hashes[id][msg.sender].push(h);
        }
    }

    function _uninstall(bytes32 id) internal override {
        bytes32[] storage hs = hashes[id][msg.sender];
        for (uint256 i = 0; i < hs.length; i++) delete grants[id][hs[i]][msg.sender];
        delete hashes[id][msg.sender];
    }

    function checkUserOpPolicy(bytes32 id, PackedUserOperation calldata userOp) external payable returns (uint256) {
        if (status[id][msg.sender] != Status.Live) return SIG_VALIDATION_FAILED;
        bytes calldata cd = userOp.callData;
        if (cd.length < 68 || bytes4(cd[0:4]) != EXECUTE_SELECTOR) revert InvalidCallData();
        bytes1 callType = cd[4];
        // The `bytes executionCalldata` argument: its head word holds the offset from the arguments.
        uint256 at = 4 + uint256(bytes32(cd[36:68]));
        uint256 length = uint256(bytes32(cd[at:at + 32]));
        bytes calldata exec = cd[at + 32:at + 32 + length];
        if (callType == CALLTYPE_SINGLE) {
            _check(id, CALLTYPE_SINGLE, address(bytes20(exec[0:20])), _selector(exec[52:]), uint256(bytes32(exec[20:52])));
        } else if (callType == CALLTYPE_BATCH) {
            Execution[] memory items = abi.decode(exec, (Execution[]));
            for (uint256 i = 0; i < items.length; i++) {
                _check(id, CALLTYPE_SINGLE, items[i].target, _selectorOf(items[i].callData), items[i].value);
            }
        } else if (callType == CALLTYPE_DELEGATECALL) {
            _check(id, CALLTYPE_DELEGATECALL, address(bytes20(exec[0:20])), _selector(exec[20:]), 0);
        } else {
            revert InvalidCallType();
        }
        return 0;
    }

    function checkSignaturePolicy(bytes32 id, address, bytes32, bytes calldata) external view returns (uint256) {
        return status[id][msg.sender] == Status.Live ? 0 : SIG_VALIDATION_FAILED;
    }

    function _check(bytes32 id, bytes1 callType, address target, bytes4 selector, uint256 value) private view {
        if (target == msg.sender) revert CallToAccount();
        Grant memory g = grants[id][keccak256(abi.encodePacked(callType, target, selector))][msg.sender];
        if (!g.allowed) g = grants[id][keccak256(abi.encodePacked(callType, address(0), selector))][msg.sender];
        if (!g.allowed) revert InvalidCallData();
        if (value > g.valueLimit) revert CallViolatesValueRule();
    }

    function _selector(bytes calldata data) private pure returns (bytes4) {
        if (data.length == 0) return bytes4(0);
        if (data.length < 4) revert InvalidCallData();
        return bytes4(data[0:4]);
    }

    function _selectorOf(bytes memory data) private pure returns (bytes4 s) {
        if (data.length == 0) return bytes4(0);
        if (data.length < 4) revert InvalidCallData();
        assembly {
            s := mload(add(data, 32))
        }
    }
}
