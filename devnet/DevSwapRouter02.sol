// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// The part of Uniswap's SwapRouter02 interface that Purser's `uniswap-v3` adapter calls, in front
/// of the real v3-periphery SwapRouter (deployed from its npm build artifact). Base runs
/// SwapRouter02, whose npm package pulls hardhat in, so the devnet runs v3-periphery's SwapRouter
/// and this contract gives it SwapRouter02's call formats: `exactInputSingle` without a deadline
/// in its struct, and `multicall(uint256 deadline, bytes[] data)` that carries the deadline. The
/// adapter therefore builds the same calldata on the devnet as on Base. Devnet only.
interface IV1SwapRouter {
    struct ExactInputSingleParams {
        address tokenIn;
        address tokenOut;
        uint24 fee;
        address recipient;
        uint256 deadline;
        uint256 amountIn;
        uint256 amountOutMinimum;
        uint160 sqrtPriceLimitX96;
    }

    function exactInputSingle(ExactInputSingleParams calldata params) external payable returns (uint256);
}

interface IRouterToken {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
    function approve(address spender, uint256 value) external returns (bool);
}

contract DevSwapRouter02 {
    struct ExactInputSingleParams {
        address tokenIn;
        address tokenOut;
        uint24 fee;
        address recipient;
        uint256 amountIn;
        uint256 amountOutMinimum;
        uint160 sqrtPriceLimitX96;
    }

    IV1SwapRouter public immutable router;

    constructor(address v1Router) {
        router = IV1SwapRouter(v1Router);
    }

    /// Swaps `amountIn` of tokenIn, pulled from the caller, for at least `amountOutMinimum` of tokenOut.
    function exactInputSingle(ExactInputSingleParams calldata params) public payable returns (uint256 amountOut) {
        require(msg.value == 0, "ETH not accepted");
        require(IRouterToken(params.tokenIn).transferFrom(msg.sender, address(this), params.amountIn), "STF");
        require(IRouterToken(params.tokenIn).approve(address(router), params.amountIn), "SA");
        amountOut = router.exactInputSingle(
            IV1SwapRouter.ExactInputSingleParams({
                tokenIn: params.tokenIn,
                tokenOut: params.tokenOut,
                fee: params.fee,
                recipient: params.recipient,
                deadline: block.timestamp,
                amountIn: params.amountIn,
                amountOutMinimum: params.amountOutMinimum,
                sqrtPriceLimitX96: params.sqrtPriceLimitX96
            })
        );
    }

    /// SwapRouter02's deadline form of multicall: each call runs in this contract's context
    /// (delegatecall, so the caller stays the payer), all or none.
    function multicall(uint256 deadline, bytes[] calldata data) external payable returns (bytes[] memory) {
        require(block.timestamp <= deadline, "Transaction too old");
        return multicall(data);
    }

    function multicall(bytes[] calldata data) public payable returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i = 0; i < data.length; i++) {
            (bool ok, bytes memory result) = address(this).delegatecall(data[i]);
            if (!ok) {
                assembly {
                    revert(add(result, 32), mload(result))
                }
            }
            results[i] = result;
        }
    }
}
