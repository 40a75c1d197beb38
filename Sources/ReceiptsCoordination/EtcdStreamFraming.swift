/// Cuts a streamed gateway answer (`/v3/watch`, `/v3/lease/keepalive`) into its messages.
///
/// The gateway writes one JSON object per message (`{"result": {...}}`), each followed by a
/// newline, over chunked HTTP/1.1; chunks need not end where messages do. The framing here does
/// not rely on the newline: it finds where each top-level object closes (braces outside
/// strings), so a message split across chunks, or two in one chunk, come out whole.
package struct EtcdStreamFraming: Sendable {
    /// The largest message accepted; a watch batch of this ordinal's few small keys is far smaller.
    package static let maximumMessageBytes = 4 << 20

    /// The stream holds a message longer than ``maximumMessageBytes``, or text outside an object.
    package struct Malformed: Error, CustomStringConvertible {
        package var description: String
    }

    private var pending: [UInt8] = []
    private var scanned = 0
    private var depth = 0
    private var inString = false
    private var escaped = false

    /// A framing with nothing received.
    package init() {}

    /// Takes the next bytes of the stream.
    ///
    /// - Returns: The messages completed by them, each a whole JSON object, in order.
    /// - Throws: `Malformed` when a message grows past the limit or text stands between objects.
    package mutating func append(_ bytes: some Sequence<UInt8>) throws(Malformed) -> [[UInt8]] {
        pending.append(contentsOf: bytes)
        var messages: [[UInt8]] = []
        var start = 0
        while scanned < pending.count {
            let byte = pending[scanned]
            scanned += 1
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "{"):
                if depth == 0 { start = scanned - 1 }
                depth += 1
            case UInt8(ascii: "}"):
                guard depth > 0 else { throw Malformed(description: "a '}' outside any message") }
                depth -= 1
                if depth == 0 { messages.append(Array(pending[start..<scanned])) }
            case UInt8(ascii: "\""):
                guard depth > 0 else { throw Malformed(description: "a string outside any message") }
                inString = true
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                continue
            default:
                guard depth > 0 else {
                    throw Malformed(description: "the byte \(byte) outside any message")
                }
            }
        }
        if depth == 0 {
            pending.removeAll(keepingCapacity: true)
            scanned = 0
        } else if start > 0 {
            pending.removeFirst(start)
            scanned -= start
        }
        guard pending.count <= Self.maximumMessageBytes else {
            throw Malformed(description: "a message longer than \(Self.maximumMessageBytes) bytes")
        }
        return messages
    }

    /// Whether part of a message is still waiting for its end.
    package var hasPartialMessage: Bool { !pending.isEmpty }
}
