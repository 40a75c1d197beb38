import ReceiptsWire

/// The decoders of the replication wire (deploy/REPLICATION.md section 4.3): what a primary
/// reads from a standby, and what a standby reads from a primary.
enum ReplicationTargets {
    /// Any frame either fails to decode (a `WireError`, never a crash) or decodes to a request
    /// that encodes and decodes back to itself.
    static func request(_ input: [UInt8]) throws(InvariantViolation) {
        guard let request = try? ReplicationRequest.decode([input]) else { return }
        let again = try? ReplicationRequest.decode(request.encode())
        try require(again == request, "request \(request) decoded back as \(String(describing: again))")
    }

    /// Any frames (cut from the input by ``frames(of:)``) either fail to decode or decode to a
    /// message whose frames decode back to it, frame 2 passing through unchanged.
    static func message(_ input: [UInt8]) throws(InvariantViolation) {
        let frames = Self.frames(of: input)
        guard let message = try? ReplicationMessage.decode(frames) else { return }
        let encoded = message.encode()
        try require(encoded.count == frames.count, "\(frames.count) frames encoded back as \(encoded.count)")
        try require(encoded.count == 1 || encoded[1] == frames[1], "frame 2 of \(message) changed")
        let again = try? ReplicationMessage.decode(encoded)
        try require(again == message, "message \(message) decoded back as \(String(describing: again))")
    }

    /// The frames an input stands for: its first byte's low two bits are the number of frames
    /// (0 to 3), the next two bytes frame 1's length (little-endian, cut to what is left), then
    /// frame 1, then frame 2 (the rest); a third frame is empty.
    static func frames(of input: [UInt8]) -> [[UInt8]] {
        guard let first = input.first else { return [] }
        let count = Int(first & 3)
        let rest = input.dropFirst(3)
        let length = input.count >= 3 ? min(Int(input[1]) | Int(input[2]) << 8, rest.count) : 0
        let frames = [Array(rest.prefix(length)), Array(rest.dropFirst(length)), []]
        return Array(frames.prefix(count))
    }

    /// The input that ``frames(of:)`` cuts into `frames` (at most 3, frame 1 under 64 KiB).
    static func input(frames: [[UInt8]]) -> [UInt8] {
        let first = frames.first ?? []
        return [UInt8(frames.count), UInt8(first.count & 0xFF), UInt8(first.count >> 8)] + frames.joined()
    }
}
