// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// A router with Aerodrome's Router interface for what Purser's `aerodrome` adapter calls
/// (`Route{from, to, stable, factory}`, `getAmountsOut`, `swapExactTokensForTokens`,
/// `defaultFactory`, `poolFor`), over volatile constant-product pools: the Uniswap v2 pairs of a
/// factory deployed from the Uniswap v2-core npm build artifact (Aerodrome's volatile pools use the
/// same x·y=k curve; its default volatile fee is 0.30%, as here). Aerodrome's contracts are not on
/// npm; this stands in for them on the devnet only. Stable pools do not exist here: as on
/// Aerodrome, a route through a pool that does not exist quotes 0.
interface IV2Factory {
    function getPair(address tokenA, address tokenB) external view returns (address);
}

interface IV2Pair {
    function token0() external view returns (address);
    function getReserves() external view returns (uint112, uint112, uint32);
    function swap(uint256 amount0Out, uint256 amount1Out, address to, bytes calldata data) external;
}

interface IAeroToken {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

contract DevAerodromeRouter {
    struct Route {
        address from;
        address to;
        bool stable;
        address factory;
    }

    error Expired();
    error InsufficientOutputAmount();
    error InvalidPath();
    error PoolDoesNotExist();

    address public immutable defaultFactory;

    constructor(address factory) {
        defaultFactory = factory;
    }

    function poolFor(address tokenA, address tokenB, bool stable, address _factory) public view returns (address pool) {
        if (stable) return address(0);
        address factory = _factory == address(0) ? defaultFactory : _factory;
        return IV2Factory(factory).getPair(tokenA, tokenB);
    }

    function getAmountsOut(uint256 amountIn, Route[] memory routes) public view returns (uint256[] memory amounts) {
        if (routes.length < 1) revert InvalidPath();
        amounts = new uint256[](routes.length + 1);
        amounts[0] = amountIn;
        for (uint256 i = 0; i < routes.length; i++) {
            address pool = poolFor(routes[i].from, routes[i].to, routes[i].stable, routes[i].factory);
            if (pool == address(0)) continue; // amounts[i + 1] stays 0, as on Aerodrome
            amounts[i + 1] = _amountOut(pool, amounts[i], routes[i].from);
        }
    }

    function swapExactTokensForTokens(
        uint256 amountIn,
        uint256 amountOutMin,
        Route[] calldata routes,
        address to,
        uint256 deadline
    ) external returns (uint256[] memory amounts) {
        if (deadline < block.timestamp) revert Expired();
        amounts = getAmountsOut(amountIn, routes);
        if (amounts[amounts.length - 1] < amountOutMin) revert InsufficientOutputAmount();
        address first = poolFor(routes[0].from, routes[0].to, routes[0].stable, routes[0].factory);
        if (first == address(0)) revert PoolDoesNotExist();
        require(IAeroToken(routes[0].from).transferFrom(msg.sender, first, amounts[0]), "transfer failed");
        for (uint256 i = 0; i < routes.length; i++) {
            address pool = poolFor(routes[i].from, routes[i].to, routes[i].stable, routes[i].factory);
            if (pool == address(0)) revert PoolDoesNotExist();
            address next = i < routes.length - 1
                ? poolFor(routes[i + 1].from, routes[i + 1].to, routes[i + 1].stable, routes[i + 1].factory)
                : to;
            (uint256 out0, uint256 out1) = IV2Pair(pool).token0() == routes[i].from
                ? (uint256(0), amounts[i + 1])
                : (amounts[i + 1], uint256(0));
            IV2Pair(pool).swap(out0, out1, next, new bytes(0));
        }
    }

    function _amountOut(address pool, uint256 amountIn, address tokenIn) private view returns (uint256) {
        (uint112 r0, uint112 r1, ) = IV2Pair(pool).getReserves();
        (uint256 reserveIn, uint256 reserveOut) = IV2Pair(pool).token0() == tokenIn
            ? (uint256(r0), uint256(r1))
            : (uint256(r1), uint256(r0));
        if (amountIn == 0 || reserveIn == 0 || reserveOut == 0) return 0;
        uint256 withFee = amountIn * 997;
        return (withFee * reserveOut) / (reserveIn * 1000 + withFee);
    }
}
