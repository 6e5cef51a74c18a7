// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// The transmitter's sending side (Circle's IRelayerV2).
interface IDevRelayerV2 {
    function sendMessage(
        uint32 destinationDomain,
        bytes32 recipient,
        bytes32 destinationCaller,
        uint32 minFinalityThreshold,
        bytes calldata messageBody
    ) external;
}

/// What the messenger needs of the devnet's TestUSDC.
interface IDevMintBurnToken {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
    function burn(uint256 amount) external;
    function mint(address to, uint256 amount) external returns (bool);
}

/// Devnet-only stand-in for Circle's CCTP V2 TokenMessengerV2, written for Purser because no
/// installable package ships Circle's bytecode. Same public interface, burn message format
/// (BurnMessageV2, version 1), events and revert messages as Circle's contract for what a client
/// calls: `depositForBurn` (0x8e0250ee), `depositForBurnWithHook` (0x779b432d), the two receive
/// handlers the transmitter calls, `remoteTokenMessengers`, `localMessageTransmitter`,
/// `messageBodyVersion`, `feeRecipient`, `minFee` (0), `getMinFeeAmount`.
///
/// Simplified:
/// - The TokenMinter role is merged in: Circle's messenger hands the deposit to a separate
///   TokenMinterV2, which burns it and later mints; here the messenger pulls the deposit in, burns
///   it with the token's `burn`, and mints with the devnet token's open `mint`. `localMinter()`
///   answers this contract; `getLocalToken(remoteDomain, remoteToken)` answers as the minter would.
/// - One remote domain per deployment (its messenger and its USDC), fixed at construction.
/// - One token (the local USDC); no burn limit per message, no denylist, no owner or roles, no
///   proxy, minimum fee 0.
/// Never deploy this outside a local devnet.
///
/// BurnMessageV2 (abi.encodePacked), byte offsets:
///   version u32 [0] | burnToken bytes32 [4] | mintRecipient bytes32 [36] | amount u256 [68] |
///   messageSender bytes32 [100] | maxFee u256 [132] | feeExecuted u256 [164] |
///   expirationBlock u256 [196] | hookData [228]
/// A deposit sends it with feeExecuted and expirationBlock 0; the attestation service fills both.
contract DevTokenMessengerV2 {
    uint32 public constant messageBodyVersion = 1;
    uint256 public constant minFee = 0;
    uint256 public constant MIN_FEE_MULTIPLIER = 10_000_000;

    address public immutable localMessageTransmitter;
    address public immutable feeRecipient;
    /// The local USDC: the only token burned and minted.
    address public immutable localUsdc;
    uint32 public immutable remoteDomain;
    bytes32 private immutable remoteTokenMessenger;
    bytes32 private immutable remoteUsdc;

    uint256 private constant BURN_MESSAGE_LENGTH = 228;
    uint32 private constant TOKEN_MESSENGER_MIN_FINALITY_THRESHOLD = 500;

    event DepositForBurn(
        address indexed burnToken,
        uint256 amount,
        address indexed depositor,
        bytes32 mintRecipient,
        uint32 destinationDomain,
        bytes32 destinationTokenMessenger,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 indexed minFinalityThreshold,
        bytes hookData
    );
    event MintAndWithdraw(address indexed mintRecipient, uint256 amount, address indexed mintToken, uint256 feeCollected);

    constructor(
        address messageTransmitter_,
        address localUsdc_,
        uint32 remoteDomain_,
        bytes32 remoteTokenMessenger_,
        bytes32 remoteUsdc_,
        address feeRecipient_
    ) {
        require(messageTransmitter_ != address(0), "MessageTransmitter not set");
        require(remoteTokenMessenger_ != bytes32(0), "Invalid TokenMessenger");
        require(feeRecipient_ != address(0), "Zero address not allowed");
        localMessageTransmitter = messageTransmitter_;
        localUsdc = localUsdc_;
        remoteDomain = remoteDomain_;
        remoteTokenMessenger = remoteTokenMessenger_;
        remoteUsdc = remoteUsdc_;
        feeRecipient = feeRecipient_;
    }

    // ------------------------------------------------------------------ views

    function remoteTokenMessengers(uint32 domain) public view returns (bytes32) {
        return domain == remoteDomain ? remoteTokenMessenger : bytes32(0);
    }

    /// The minter role is this contract (see above).
    function localMinter() external view returns (address) {
        return address(this);
    }

    /// TokenMinterV2's lookup: the local token minted for `remoteToken` burned on `remoteDomain_`.
    function getLocalToken(uint32 remoteDomain_, bytes32 remoteToken) public view returns (address) {
        return remoteDomain_ == remoteDomain && remoteToken == remoteUsdc ? localUsdc : address(0);
    }

    function getMinFeeAmount(uint256) external pure returns (uint256) {
        return 0; // minFee is 0
    }

    // ------------------------------------------------------------------ sending

    function depositForBurn(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold
    ) external {
        _depositForBurn(
            Deposit(amount, destinationDomain, mintRecipient, burnToken, destinationCaller, maxFee, minFinalityThreshold),
            msg.data[0:0]
        );
    }

    function depositForBurnWithHook(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold,
        bytes calldata hookData
    ) external {
        require(hookData.length > 0, "Hook data is empty");
        _depositForBurn(
            Deposit(amount, destinationDomain, mintRecipient, burnToken, destinationCaller, maxFee, minFinalityThreshold),
            hookData
        );
    }

    /// The arguments of a deposit, together (as separate values they do not fit on the stack).
    struct Deposit {
        uint256 amount;
        uint32 destinationDomain;
        bytes32 mintRecipient;
        address burnToken;
        bytes32 destinationCaller;
        uint256 maxFee;
        uint32 minFinalityThreshold;
    }

    function _depositForBurn(Deposit memory d, bytes calldata hookData) private {
        require(d.amount > 0, "Amount must be nonzero");
        require(d.mintRecipient != bytes32(0), "Mint recipient must be nonzero");
        require(d.maxFee < d.amount, "Max fee must be less than amount");
        bytes32 destinationTokenMessenger = remoteTokenMessengers(d.destinationDomain);
        require(destinationTokenMessenger != bytes32(0), "No TokenMessenger for domain");
        require(d.burnToken == localUsdc, "Burn token not supported");

        IDevMintBurnToken token = IDevMintBurnToken(d.burnToken);
        require(token.transferFrom(msg.sender, address(this), d.amount), "Transfer operation failed");
        token.burn(d.amount);

        IDevRelayerV2(localMessageTransmitter).sendMessage(
            d.destinationDomain,
            destinationTokenMessenger,
            d.destinationCaller,
            d.minFinalityThreshold,
            _burnMessage(d, hookData)
        );
        _emitDeposit(d, destinationTokenMessenger, hookData);
    }

    function _burnMessage(Deposit memory d, bytes calldata hookData) private view returns (bytes memory) {
        return abi.encodePacked(
            messageBodyVersion,
            bytes32(uint256(uint160(d.burnToken))),
            d.mintRecipient,
            d.amount,
            bytes32(uint256(uint160(msg.sender))),
            d.maxFee,
            uint256(0), // feeExecuted: filled by the attestation service
            uint256(0), // expirationBlock: filled by the attestation service
            hookData
        );
    }

    function _emitDeposit(Deposit memory d, bytes32 destinationTokenMessenger, bytes calldata hookData) private {
        emit DepositForBurn(
            d.burnToken,
            d.amount,
            msg.sender,
            d.mintRecipient,
            d.destinationDomain,
            destinationTokenMessenger,
            d.destinationCaller,
            d.maxFee,
            d.minFinalityThreshold,
            hookData
        );
    }

    // ------------------------------------------------------------------ receiving

    function handleReceiveFinalizedMessage(uint32 sourceDomain, bytes32 sender, uint32, bytes calldata messageBody)
        external
        returns (bool)
    {
        _checkSource(sourceDomain, sender);
        return _mintFromMessage(sourceDomain, messageBody);
    }

    function handleReceiveUnfinalizedMessage(
        uint32 sourceDomain,
        bytes32 sender,
        uint32 finalityThresholdExecuted,
        bytes calldata messageBody
    ) external returns (bool) {
        _checkSource(sourceDomain, sender);
        require(finalityThresholdExecuted >= TOKEN_MESSENGER_MIN_FINALITY_THRESHOLD, "Unsupported finality threshold");
        return _mintFromMessage(sourceDomain, messageBody);
    }

    function _checkSource(uint32 sourceDomain, bytes32 sender) private view {
        require(msg.sender == localMessageTransmitter, "Invalid message transmitter");
        require(
            sender != bytes32(0) && remoteTokenMessengers(sourceDomain) == sender, "Remote TokenMessenger unsupported"
        );
    }

    function _mintFromMessage(uint32 sourceDomain, bytes calldata body) private returns (bool) {
        require(body.length >= BURN_MESSAGE_LENGTH, "Invalid burn message: too short");
        require(uint32(bytes4(body[0:4])) == messageBodyVersion, "Invalid message body version");
        uint256 expirationBlock = uint256(bytes32(body[196:228]));
        require(
            expirationBlock == 0 || expirationBlock > block.number, "Message expired and must be re-signed"
        );
        uint256 amount = uint256(bytes32(body[68:100]));
        uint256 fee = uint256(bytes32(body[164:196]));
        require(fee == 0 || fee < amount, "Fee equals or exceeds amount");
        require(fee <= uint256(bytes32(body[132:164])), "Fee exceeds max fee");
        address mintToken = getLocalToken(sourceDomain, bytes32(body[4:36]));
        require(mintToken != address(0), "Mint token not supported");
        address mintRecipient = address(uint160(uint256(bytes32(body[36:68]))));

        IDevMintBurnToken(mintToken).mint(mintRecipient, amount - fee);
        if (fee > 0) IDevMintBurnToken(mintToken).mint(feeRecipient, fee);
        emit MintAndWithdraw(mintRecipient, amount - fee, mintToken, fee);
        return true;
    }
}
