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
///   reverts. ParamRule = (uint8 condition, uint64 offset, bytes32[] params), condition in v0.0.4's
///   enum order: 0 EQUAL, 1 GREATER_THAN, 2 LESS_THAN, 3 GREATER_THAN_OR_EQUAL,
///   4 LESS_THAN_OR_EQUAL, 5 NOT_EQUAL, 6 ONE_OF (a higher value reverts `UnknownCondition`, as
///   decoding the enum does in ZeroDev's); every condition but ONE_OF takes exactly one param
///   (`ParamCountMismatch`).
/// - `checkUserOpPolicy`: userOp.callData must be `execute` (0xe9ae5c53). A single call
///   (callType 0x00: target(20) ‖ value(32) ‖ data) and each item of a batch (0x01:
///   abi.encode((address,uint256,bytes)[])) is looked up as callType 0x00 by (target, the data's
///   first 4 bytes or 0x00000000 when empty), then with target 0 (any target); a delegatecall
///   (0xff: target(20) ‖ data) as callType 0xff with value 0. No entry: `InvalidCallData`; value
///   over the limit: `CallViolatesValueRule`; a call to the account itself: `CallToAccount`; other
///   call types: `InvalidCallType`. Then each rule of the entry: the 32-byte word of the call's
///   data at `4 + offset` (offset counted from the arguments, after the selector; any byte
///   offset) compared as an unsigned number with params[0] (ONE_OF: equal to one of the params);
///   a word that fails, or lies past the end of the data: `CallViolatesParamRule`. Violations
///   revert, as ZeroDev's do; a permitted op answers 0.
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
        uint256 ruleCount;
    }

    struct RuleHead {
        uint8 condition;
        uint64 offset;
        uint256 paramCount;
    }

    bytes4 private constant EXECUTE_SELECTOR = 0xe9ae5c53;
    bytes1 private constant CALLTYPE_SINGLE = 0x00;
    bytes1 private constant CALLTYPE_BATCH = 0x01;
    bytes1 private constant CALLTYPE_DELEGATECALL = 0xff;

    uint8 private constant EQUAL = 0;
    uint8 private constant GREATER_THAN = 1;
    uint8 private constant LESS_THAN = 2;
    uint8 private constant GREATER_THAN_OR_EQUAL = 3;
    uint8 private constant LESS_THAN_OR_EQUAL = 4;
    uint8 private constant NOT_EQUAL = 5;
    uint8 private constant ONE_OF = 6;

    // Every mapping below has the account as its innermost key, so each slot a check reads is
    // keccak256(account ‖ …) (+ a struct field): storage associated with the sender (ERC-7562).

    /// Grants by keccak256(callType ‖ target ‖ selector).
    mapping(bytes32 id => mapping(bytes32 permissionHash => mapping(address wallet => Grant))) public grants;
    /// The i-th parameter rule of a grant.
    mapping(bytes32 id => mapping(bytes32 permissionHash => mapping(uint256 i => mapping(address wallet => RuleHead))))
        public ruleHeads;
    /// The j-th param of the i-th rule.
    mapping(
        bytes32 id
            => mapping(bytes32 permissionHash => mapping(uint256 i => mapping(uint256 j => mapping(address wallet => bytes32))))
    ) public ruleParams;
    /// The permission hashes of (id, account), for uninstalling.
    mapping(bytes32 id => mapping(address wallet => bytes32[])) private hashes;

    error DuplicatePermission(bytes32 permissionHash);
    error UnknownCondition(uint8 condition);
    error ParamCountMismatch(uint8 condition, uint256 count);
    error InvalidCallType();
    error InvalidCallData();
    error CallViolatesValueRule();
    error CallViolatesParamRule();
    error CallToAccount();

    function _install(bytes32 id, bytes calldata data) internal override {
        Permission[] memory permissions = abi.decode(data, (Permission[]));
        for (uint256 i = 0; i < permissions.length; i++) {
            Permission memory p = permissions[i];
            bytes32 h = keccak256(abi.encodePacked(p.callType, p.target, p.selector));
            if (grants[id][h][msg.sender].allowed) revert DuplicatePermission(h);
            grants[id][h][msg.sender] = Grant(true, p.valueLimit, p.rules.length);
            for (uint256 r = 0; r < p.rules.length; r++) {
                ParamRule memory rule = p.rules[r];
                if (rule.condition > ONE_OF) revert UnknownCondition(rule.condition);
                if (rule.condition != ONE_OF && rule.params.length != 1) {
                    revert ParamCountMismatch(rule.condition, rule.params.length);
                }
                ruleHeads[id][h][r][msg.sender] = RuleHead(rule.condition, rule.offset, rule.params.length);
                for (uint256 j = 0; j < rule.params.length; j++) {
                    ruleParams[id][h][r][j][msg.sender] = rule.params[j];
                }
            }
            hashes[id][msg.sender].push(h);
        }
    }

    function _uninstall(bytes32 id) internal override {
        bytes32[] storage hs = hashes[id][msg.sender];
        // The rules stay behind but are unreachable: a permission id never installs twice.
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
            _check(id, CALLTYPE_SINGLE, address(bytes20(exec[0:20])), exec[52:], uint256(bytes32(exec[20:52])));
        } else if (callType == CALLTYPE_BATCH) {
            Execution[] memory items = abi.decode(exec, (Execution[]));
            for (uint256 i = 0; i < items.length; i++) {
                _check(id, CALLTYPE_SINGLE, items[i].target, items[i].callData, items[i].value);
            }
        } else if (callType == CALLTYPE_DELEGATECALL) {
            _check(id, CALLTYPE_DELEGATECALL, address(bytes20(exec[0:20])), exec[20:], 0);
        } else {
            revert InvalidCallType();
        }
        return 0;
    }

    function checkSignaturePolicy(bytes32 id, address, bytes32, bytes calldata) external view returns (uint256) {
        return status[id][msg.sender] == Status.Live ? 0 : SIG_VALIDATION_FAILED;
    }

    function _check(bytes32 id, bytes1 callType, address target, bytes memory data, uint256 value) private view {
        if (target == msg.sender) revert CallToAccount();
        bytes4 selector = _selectorOf(data);
        bytes32 h = keccak256(abi.encodePacked(callType, target, selector));
        Grant memory g = grants[id][h][msg.sender];
        if (!g.allowed) {
            h = keccak256(abi.encodePacked(callType, address(0), selector));
            g = grants[id][h][msg.sender];
        }
        if (!g.allowed) revert InvalidCallData();
        if (value > g.valueLimit) revert CallViolatesValueRule();
        for (uint256 r = 0; r < g.ruleCount; r++) {
            if (!_passes(id, h, r, data)) revert CallViolatesParamRule();
        }
    }

    /// Whether the word at `4 + offset` of `data` meets rule `r` of grant `h`.
    function _passes(bytes32 id, bytes32 h, uint256 r, bytes memory data) private view returns (bool) {
        RuleHead memory rule = ruleHeads[id][h][r][msg.sender];
        uint256 at = 4 + uint256(rule.offset);
        if (data.length < at + 32) return false;
        bytes32 word;
        assembly {
            word := mload(add(add(data, 32), at))
        }
        if (rule.condition == ONE_OF) {
            for (uint256 j = 0; j < rule.paramCount; j++) {
                if (word == ruleParams[id][h][r][j][msg.sender]) return true;
            }
            return false;
        }
        uint256 v = uint256(word);
        uint256 p = uint256(ruleParams[id][h][r][0][msg.sender]);
        if (rule.condition == EQUAL) return v == p;
        if (rule.condition == GREATER_THAN) return v > p;
        if (rule.condition == LESS_THAN) return v < p;
        if (rule.condition == GREATER_THAN_OR_EQUAL) return v >= p;
        if (rule.condition == LESS_THAN_OR_EQUAL) return v <= p;
        return v != p; // NOT_EQUAL
    }

    function _selectorOf(bytes memory data) private pure returns (bytes4 s) {
        if (data.length == 0) return bytes4(0);
        if (data.length < 4) revert InvalidCallData();
        assembly {
            s := mload(add(data, 32))
        }
    }
}
