package import ReceiptsCore

/// A record of receiptd's log: the one place that knows the record types and how each one's
/// payload is laid out, for the service that writes and replays them and for the tools.
///
/// A batch record holds the server time its frame was applied at, then the frame exactly as
/// the gateway sent it: logging the raw frame costs no re-encoding on the hot path, and
/// replaying it through the same engine at the same time gives the same state, because the
/// engine is deterministic. A retention record holds a cutoff; it is written before compaction
/// applies retention to the live state, so that a replay after a crash expires exactly the
/// same messages at exactly the same point of the history.
///
/// The steps of a worker count change (deploy/SCALING.md) are records too, written before the
/// step is answered, so that a restart in the middle of a move knows what it serves.
///
/// A term record marks a change of primary (deploy/REPLICATION.md, section 7.1): it changes no
/// receipt state, and recovery collects the terms into the log's `TermHistory`.
///
/// A batch's frame and an import's state are borrowed: a record read from a payload is valid
/// only while the payload is.
package enum LogRecord {
    /// A batch from the acknowledged ingest endpoint, applied at `time`.
    case acknowledgedBatch(time: Timestamp, frame: UnsafeRawBufferPointer)
    /// A batch from the fire-and-forget ingest endpoint, applied at `time`.
    case unacknowledgedBatch(time: Timestamp, frame: UnsafeRawBufferPointer)
    /// Messages sent before `cutoff` leave the state.
    case retention(cutoff: Timestamp)
    /// The cluster goes from `from` to `to` workers under `epoch`.
    case movePrepared(epoch: UInt64, from: Int, to: Int)
    /// Conversations frozen for their export to worker `destination`.
    case moveFrozen(epoch: UInt64, destination: Int, conversations: [String])
    /// Conversations imported from worker `sender` (`last`: it has no more for this worker).
    case moveImported(time: Timestamp, epoch: UInt64, sender: Int, last: Bool, state: UnsafeRawBufferPointer)
    /// Conversations given to their new owner, worker `destination`.
    case moveReleased(epoch: UInt64, destination: Int, conversations: [String])
    /// The move under `epoch` is done.
    case moveCommitted(epoch: UInt64)
    /// `member` became the primary of `term`, which followed `previousTerm`; the first record of
    /// every term.
    case termStarted(term: UInt64, previousTerm: UInt64, member: String)

    /// The record types, as stored in the log.
    package enum Kind: UInt8, Sendable {
        case acknowledgedBatch = 1
        case unacknowledgedBatch = 2
        case retention = 3
        case movePrepared = 4
        case moveFrozen = 5
        case moveImported = 6
        case moveReleased = 7
        case moveCommitted = 8
        case termStarted = 9

        /// The steps of a worker count change.
        package static let moveSteps: [Kind] = [
            .movePrepared, .moveFrozen, .moveImported, .moveReleased, .moveCommitted,
        ]

        /// A move step's name for counters and logs.
        var name: String {
            switch self {
            case .movePrepared: "prepare"
            case .moveFrozen: "freeze"
            case .moveImported: "import"
            case .moveReleased: "release"
            case .moveCommitted: "commit"
            case .acknowledgedBatch: "acknowledged_batch"
            case .unacknowledgedBatch: "unacknowledged_batch"
            case .retention: "retention"
            case .termStarted: "term_started"
            }
        }
    }

    /// Why a stored record cannot be read.
    package struct Invalid: Error, CustomStringConvertible {
        package var description: String
    }

    private static let timeSize = MemoryLayout<Int64>.size

    /// The record's type.
    package var kind: Kind {
        switch self {
        case .acknowledgedBatch: .acknowledgedBatch
        case .unacknowledgedBatch: .unacknowledgedBatch
        case .retention: .retention
        case .movePrepared: .movePrepared
        case .moveFrozen: .moveFrozen
        case .moveImported: .moveImported
        case .moveReleased: .moveReleased
        case .moveCommitted: .moveCommitted
        case .termStarted: .termStarted
        }
    }

    /// The payload stored in the log.
    package func payload() -> [UInt8] {
        switch self {
        case .acknowledgedBatch(let time, let frame), .unacknowledgedBatch(let time, let frame):
            [UInt8](unsafeUninitializedCapacity: Self.timeSize + frame.count) { buffer, count in
                let raw = UnsafeMutableRawBufferPointer(buffer)
                raw.storeBytes(of: time.milliseconds.littleEndian, as: Int64.self)
                if let base = frame.baseAddress, !frame.isEmpty {
                    (raw.baseAddress! + Self.timeSize).copyMemory(from: base, byteCount: frame.count)
                }
                count = Self.timeSize + frame.count
            }
        case .retention(let cutoff):
            withUnsafeBytes(of: cutoff.milliseconds.littleEndian) { Array($0) }
        case .movePrepared(let epoch, let from, let to):
            Self.bytes {
                $0.append(epoch)
                $0.append(UInt32(from), UInt32(to))
            }
        case .moveFrozen(let epoch, let destination, let conversations),
            .moveReleased(let epoch, let destination, let conversations):
            Self.bytes {
                $0.append(epoch)
                $0.append(UInt32(destination))
                $0.append(conversations)
            }
        case .moveImported(let time, let epoch, let sender, let last, let state):
            Self.bytes {
                $0.append(UInt64(bitPattern: time.milliseconds), epoch)
                $0.append(UInt32(sender), UInt32(last ? 1 : 0))
                $0.bytes.append(contentsOf: state)
            }
        case .moveCommitted(let epoch):
            Self.bytes { $0.append(epoch) }
        case .termStarted(let term, let previousTerm, let member):
            Self.bytes {
                $0.append(term, previousTerm)
                $0.append(name: member)
            }
        }
    }

    private static func bytes(_ build: (inout PayloadWriter) -> Void) -> [UInt8] {
        var writer = PayloadWriter()
        build(&writer)
        return writer.bytes
    }

    /// Reads a record back from its stored type and payload.
    ///
    /// - Throws: `Invalid` for a type this build does not know, or a payload too short for
    ///   its time, of the wrong size for a cutoff, or short or long for its fields.
    package init(type: UInt8, payload: UnsafeRawBufferPointer) throws(Invalid) {
        switch Kind(rawValue: type) {
        case .acknowledgedBatch, .unacknowledgedBatch:
            guard payload.count >= Self.timeSize else {
                throw Invalid(description: "a batch record of \(payload.count) bytes is too short for its time")
            }
            let time = Timestamp(milliseconds: Int64(littleEndian: payload.loadUnaligned(as: Int64.self)))
            let frame = UnsafeRawBufferPointer(rebasing: payload[Self.timeSize...])
            self =
                type == Kind.acknowledgedBatch.rawValue
                ? .acknowledgedBatch(time: time, frame: frame) : .unacknowledgedBatch(time: time, frame: frame)
        case .retention:
            guard payload.count == Self.timeSize else {
                throw Invalid(description: "a retention record of \(payload.count) bytes is not one cutoff")
            }
            self = .retention(
                cutoff: Timestamp(milliseconds: Int64(littleEndian: payload.loadUnaligned(as: Int64.self)))
            )
        case .movePrepared:
            var r = PayloadReader(payload, name: "a move-prepared record")
            self = .movePrepared(
                epoch: try r.read(),
                from: Int(try r.read(UInt32.self)),
                to: Int(try r.read(UInt32.self))
            )
            try r.finish()
        case .moveFrozen, .moveReleased:
            var r = PayloadReader(payload, name: "a move record")
            let epoch: UInt64 = try r.read()
            let destination = Int(try r.read(UInt32.self))
            let conversations = try r.readStrings()
            try r.finish()
            self =
                type == Kind.moveFrozen.rawValue
                ? .moveFrozen(epoch: epoch, destination: destination, conversations: conversations)
                : .moveReleased(epoch: epoch, destination: destination, conversations: conversations)
        case .moveImported:
            var r = PayloadReader(payload, name: "a move-imported record")
            let time = Timestamp(milliseconds: Int64(bitPattern: try r.read(UInt64.self)))
            let epoch: UInt64 = try r.read()
            let sender = Int(try r.read(UInt32.self))
            let last = try r.read(UInt32.self) != 0
            self = .moveImported(time: time, epoch: epoch, sender: sender, last: last, state: r.rest)
        case .moveCommitted:
            var r = PayloadReader(payload, name: "a move-committed record")
            self = .moveCommitted(epoch: try r.read())
            try r.finish()
        case .termStarted:
            var r = PayloadReader(payload, name: "a term-started record")
            self = .termStarted(term: try r.read(), previousTerm: try r.read(), member: try r.readName())
            try r.finish()
        case nil:
            throw Invalid(description: "a record of unknown type \(type)")
        }
    }
}

/// Little-endian integers and counted strings, for the payloads of move and term records.
private struct PayloadWriter {
    var bytes: [UInt8] = []

    mutating func append<T: FixedWidthInteger>(_ values: T...) {
        for value in values { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    }

    mutating func append(_ strings: [String]) {
        append(UInt32(strings.count))
        for string in strings {
            append(UInt32(string.utf8.count))
            bytes.append(contentsOf: string.utf8)
        }
    }

    /// A name counted by a u16 (a term record's member: `TermHistory` keeps names that short).
    mutating func append(name: String) {
        precondition(name.utf8.count <= UInt16.max, "a name of \(name.utf8.count) bytes")
        append(UInt16(name.utf8.count))
        bytes.append(contentsOf: name.utf8)
    }
}

/// Reads what `PayloadWriter` wrote, refusing anything short or left over.
private struct PayloadReader {
    let payload: UnsafeRawBufferPointer
    let name: String
    var offset = 0

    init(_ payload: UnsafeRawBufferPointer, name: String) {
        self.payload = payload
        self.name = name
    }

    mutating func read<T: FixedWidthInteger>(_: T.Type = T.self) throws(LogRecord.Invalid) -> T {
        let size = MemoryLayout<T>.size
        guard payload.count - offset >= size else {
            throw LogRecord.Invalid(description: "\(name) of \(payload.count) bytes is too short")
        }
        defer { offset += size }
        return T(littleEndian: payload.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    mutating func readStrings() throws(LogRecord.Invalid) -> [String] {
        let count = Int(try read(UInt32.self))
        guard count <= payload.count else { throw LogRecord.Invalid(description: "\(name) counts \(count) strings") }
        var strings: [String] = []
        strings.reserveCapacity(count)
        for _ in 0..<count {
            strings.append(try readString(length: Int(try read(UInt32.self))))
        }
        return strings
    }

    /// A name counted by a u16, as `PayloadWriter.append(name:)` wrote it.
    mutating func readName() throws(LogRecord.Invalid) -> String {
        try readString(length: Int(try read(UInt16.self)))
    }

    private mutating func readString(length: Int) throws(LogRecord.Invalid) -> String {
        guard payload.count - offset >= length else {
            throw LogRecord.Invalid(description: "\(name) of \(payload.count) bytes is too short")
        }
        defer { offset += length }
        return String(decoding: UnsafeRawBufferPointer(rebasing: payload[offset..<offset + length]), as: UTF8.self)
    }

    /// The bytes after what was read.
    var rest: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: payload[offset...]) }

    func finish() throws(LogRecord.Invalid) {
        guard offset == payload.count else {
            throw LogRecord.Invalid(description: "\(name) has \(payload.count - offset) bytes too many")
        }
    }
}
