// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Devnet price feed with Chainlink's AggregatorV3Interface (decimals, description, version,
/// getRoundData, latestRoundData), so the Chainlink adapter reads it exactly as it reads a feed
/// proxy on Base. Anyone may post an answer: devnet only, so tests and the development operator
/// can move a price, make it stale (an old `updatedAt`) or bad (zero, negative).
contract DevPriceFeed {
    struct Round {
        int256 answer;
        uint256 startedAt;
        uint256 updatedAt;
    }

    uint8 public immutable decimals;
    string public description;
    uint256 public constant version = 4;

    uint80 public latestRound;
    mapping(uint80 => Round) private rounds;

    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    constructor(uint8 feedDecimals, string memory feedDescription, int256 initialAnswer) {
        decimals = feedDecimals;
        description = feedDescription;
        _post(initialAnswer, block.timestamp);
    }

    /// A new round answering `answer` now.
    function setAnswer(int256 answer) external {
        _post(answer, block.timestamp);
    }

    /// A new round answering `answer`, stamped `updatedAt` (an old stamp makes the feed stale).
    function setRound(int256 answer, uint256 updatedAt) external {
        _post(answer, updatedAt);
    }

    function getRoundData(uint80 roundId)
        external
        view
        returns (uint80, int256, uint256, uint256, uint80)
    {
        Round memory r = rounds[roundId];
        require(r.updatedAt != 0 || roundId == latestRound, "No data present");
        return (roundId, r.answer, r.startedAt, r.updatedAt, roundId);
    }

    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80) {
        Round memory r = rounds[latestRound];
        return (latestRound, r.answer, r.startedAt, r.updatedAt, latestRound);
    }

    function _post(int256 answer, uint256 updatedAt) private {
        latestRound += 1;
        rounds[latestRound] = Round(answer, updatedAt, updatedAt);
        emit AnswerUpdated(answer, latestRound, updatedAt);
    }
}
