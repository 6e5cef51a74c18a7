// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {PackedUserOperation, KernelPolicyBase} from "./KernelModuleBase.sol";

/// Devnet rate-limit policy for ZeroDev Kernel v3 permissions (module type 5 = policy), written for
/// Purser: no npm package ships the bytecode of ZeroDev's module.
///
/// Interface origin: ZeroDev's `RateLimitPolicy` (zerodevapp/kernel-7579-plugins,
/// policies/ratelimit, SDK constant 0xf63d4139B25c836334edD76641356c6b74C86873) on Kernel's
/// `PolicyBase`, with EntryPoint v0.7's PackedUserOperation.
/// - `onInstall(bytes32 permissionId ‖ uint48 interval ‖ uint48 count ‖ uint48 startAt)` (packed,
///   18 bytes) from the account; status NA → Live → Deprecated, installing needs NA.
/// - `checkUserOpPolicy`: `count` operations in total, at most one per `interval`: each call uses
///   one, answers validation data with `validAfter = startAt` (no validUntil, aggregator part 0)
///   and moves `startAt` on by `interval`; with none left (or not live) it answers 1. A call the
///   EntryPoint then refuses as not due reverts, and with it the use.
/// - `checkSignaturePolicy`: 0 when live, else 1.
contract KernelRateLimitPolicy is KernelPolicyBase {
    struct RateLimitConfig {
        uint48 interval;
        uint48 count;
        uint48 startAt;
    }


    mapping(bytes32 id => mapping(address wallet => RateLimitConfig)) public rateLimitConfigs;

    error InvalidPolicyData();

    function _install(bytes32 id, bytes calldata data) internal override {
        if (data.length != 18) revert InvalidPolicyData();
        uint48 interval = uint48(bytes6(data[0:6]));
        uint48 count = uint48(bytes6(data[6:12]));
        uint48 startAt = uint48(bytes6(data[12:18]));
        rateLimitConfigs[id][msg.sender] = RateLimitConfig(interval, count, startAt);
    }

    function _uninstall(bytes32 id) internal override {
        delete rateLimitConfigs[id][msg.sender];
    }

    function checkUserOpPolicy(bytes32 id, PackedUserOperation calldata) external payable returns (uint256) {
        if (status[id][msg.sender] != Status.Live) return SIG_VALIDATION_FAILED;
        RateLimitConfig memory c = rateLimitConfigs[id][msg.sender];
        if (c.count == 0) return SIG_VALIDATION_FAILED;
        rateLimitConfigs[id][msg.sender] = RateLimitConfig(c.interval, c.count - 1, c.startAt + c.interval);
        return uint256(c.startAt) << 208;
    }

    function checkSignaturePolicy(bytes32 id, address, bytes32, bytes calldata) external view returns (uint256) {
        return status[id][msg.sender] == Status.Live ? 0 : SIG_VALIDATION_FAILED;
    }
}
