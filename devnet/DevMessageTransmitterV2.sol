// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// What the transmitter calls on a message's recipient (Circle's IMessageHandlerV2).
interface IDevMessageHandlerV2 {
    function handleReceiveFinalizedMessage(
        uint32 sourceDomain,
        bytes32 sender,
        uint32 finalityThresholdExecuted,
        bytes calldata messageBody
    ) external returns (bool);

    function handleReceiveUnfinalizedMessage(
        uint32 sourceDomain,
        bytes32 sender,
        uint32 finalityThresholdExecuted,
        bytes calldata messageBody
    ) external returns (bool);
}

/// Devnet-only stand-in for Circle's CCTP V2 MessageTransmitterV2, written for Purser because no
/// installable package ships Circle's bytecode. Same public interface, message format (MessageV2,
/// version 1), events, attestation check and revert messages as Circle's contract for what a
/// client calls: `sendMessage`, `receiveMessage`, `usedNonces`, `localDomain`, `version`,
/// `signatureThreshold`, `isEnabledAttester`, `getNumEnabledAttesters`, `getEnabledAttester`.
///
/// Simplified: one attester fixed at construction (threshold 1), no owner, pauser, rescuer or
/// attester manager, not behind a proxy. Never deploy this outside a local devnet.
///
/// MessageV2 (abi.encodePacked), byte offsets:
///   version u32 [0] | sourceDomain u32 [4] | destinationDomain u32 [8] | nonce bytes32 [12] |
///   sender bytes32 [44] | recipient bytes32 [76] | destinationCaller bytes32 [108] |
///   minFinalityThreshold u32 [140] | finalityThresholdExecuted u32 [144] | messageBody [148]
/// `sendMessage` emits it with a zero nonce and finalityThresholdExecuted; the attestation
/// service fills both in the message it signs.
contract DevMessageTransmitterV2 {
    /// Format version of the messages this transmitter sends and accepts (CCTP V2 messages say 1).
    uint32 public constant version = 1;
    uint256 public constant signatureThreshold = 1;
    uint256 public constant maxMessageBodySize = 8192;

    uint32 public immutable localDomain;
    address private immutable attester;

    /// Nonce => 1 once a message with it was received.
    mapping(bytes32 => uint256) public usedNonces;

    uint256 private constant HEADER_LENGTH = 148;
    uint256 private constant SIGNATURE_LENGTH = 65;
    uint32 private constant FINALITY_THRESHOLD_FINALIZED = 2000;
    uint256 private constant HALF_CURVE_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    event MessageSent(bytes message);
    event MessageReceived(
        address indexed caller,
        uint32 sourceDomain,
        bytes32 indexed nonce,
        bytes32 sender,
        uint32 indexed finalityThresholdExecuted,
        bytes messageBody
    );
    event AttesterEnabled(address indexed attester);

    constructor(uint32 localDomain_, address attester_) {
        require(attester_ != address(0), "New attester must be nonzero");
        localDomain = localDomain_;
        attester = attester_;
        emit AttesterEnabled(attester_);
    }

    function isEnabledAttester(address candidate) public view returns (bool) {
        return candidate == attester;
    }

    function getNumEnabledAttesters() external pure returns (uint256) {
        return 1;
    }

    function getEnabledAttester(uint256 index) external view returns (address) {
        require(index == 0, "Index out of bounds");
        return attester;
    }

    function sendMessage(
        uint32 destinationDomain,
        bytes32 recipient,
        bytes32 destinationCaller,
        uint32 minFinalityThreshold,
        bytes calldata messageBody
    ) external {
        require(destinationDomain != localDomain, "Domain is local domain");
        require(messageBody.length <= maxMessageBodySize, "Message body exceeds max size");
        require(recipient != bytes32(0), "Recipient must be nonzero");
        bytes memory head = abi.encodePacked(
            version,
            localDomain,
            destinationDomain,
            bytes32(0), // nonce: filled by the attestation service
            bytes32(uint256(uint160(msg.sender)))
        );
        emit MessageSent(
            abi.encodePacked(
                head,
                recipient,
                destinationCaller,
                minFinalityThreshold,
                uint32(0), // finalityThresholdExecuted: filled by the attestation service
                messageBody
            )
        );
    }

    /// `attestation`: the attester's 65-byte ECDSA signature (r ‖ s ‖ v) of keccak256(message).
    function receiveMessage(bytes calldata message, bytes calldata attestation) external returns (bool success) {
        _verifyAttestation(message, attestation);
        require(message.length >= HEADER_LENGTH, "Invalid message: too short");
        require(_u32(message, 8) == localDomain, "Invalid destination domain");
        bytes32 destinationCaller = bytes32(message[108:140]);
        if (destinationCaller != bytes32(0)) {
            require(destinationCaller == bytes32(uint256(uint160(msg.sender))), "Invalid caller for message");
        }
        require(_u32(message, 0) == version, "Invalid message version");
        bytes32 nonce = bytes32(message[12:44]);
        require(usedNonces[nonce] == 0, "Nonce already used");
        usedNonces[nonce] = 1;

        uint32 finalityThresholdExecuted = _u32(message, 144);
        _deliver(message, finalityThresholdExecuted);
        emit MessageReceived(
            msg.sender,
            _u32(message, 4),
            nonce,
            bytes32(message[44:76]),
            finalityThresholdExecuted,
            message[HEADER_LENGTH:]
        );
        return true;
    }

    function _deliver(bytes calldata message, uint32 finalityThresholdExecuted) private {
        IDevMessageHandlerV2 recipient = IDevMessageHandlerV2(address(uint160(uint256(bytes32(message[76:108])))));
        uint32 sourceDomain = _u32(message, 4);
        bytes32 sender = bytes32(message[44:76]);
        if (finalityThresholdExecuted < FINALITY_THRESHOLD_FINALIZED) {
            require(
                recipient.handleReceiveUnfinalizedMessage(
                    sourceDomain, sender, finalityThresholdExecuted, message[HEADER_LENGTH:]
                ),
                "handleReceiveUnfinalizedMessage() failed"
            );
        } else {
            require(
                recipient.handleReceiveFinalizedMessage(
                    sourceDomain, sender, finalityThresholdExecuted, message[HEADER_LENGTH:]
                ),
                "handleReceiveFinalizedMessage() failed"
            );
        }
    }

    function _verifyAttestation(bytes calldata message, bytes calldata attestation) private view {
        require(attestation.length == SIGNATURE_LENGTH * signatureThreshold, "Invalid attestation length");
        bytes32 r = bytes32(attestation[0:32]);
        bytes32 s = bytes32(attestation[32:64]);
        uint8 v = uint8(attestation[64]);
        require(uint256(s) <= HALF_CURVE_ORDER, "ECDSA: invalid signature 's' value");
        require(v == 27 || v == 28, "ECDSA: invalid signature 'v' value");
        address signer = ecrecover(keccak256(message), v, r, s);
        require(signer != address(0), "ECDSA: invalid signature");
        require(isEnabledAttester(signer), "Invalid signature: not attester");
    }

    function _u32(bytes calldata data, uint256 at) private pure returns (uint32) {
        return uint32(bytes4(data[at:at + 4]));
    }
}
