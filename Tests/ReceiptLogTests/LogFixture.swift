import Dispatch
import Foundation
import Logging
import Synchronization

@testable import ReceiptLog

/// A fresh log directory under /tmp, with helpers to open logs in it and inspect its files.
/// The directory is removed when the fixture goes away.
final class LogFixture: Sendable {
    let directory: String
    let logs = RecordingLogHandler()

    init() throws {
        var template = Array("/tmp/receiptlog-test-XXXXXX".utf8CString)
        guard let path = mkdtemp(&template) else { throw POSIXError(.EIO) }
        self.directory = String(cString: path) + "/log"
    }

    deinit {
        try? FileManager.default.removeItem(atPath: (self.directory as NSString).deletingLastPathComponent)
    }

    func configuration(_ configure: (inout LogConfiguration) -> Void = { _ in }) -> LogConfiguration {
        var configuration = LogConfiguration(directory: self.directory)
        configure(&configuration)
        return configuration
    }

    /// Opens the log with callbacks wired to an ``Events`` recorder.
    func open(_ configure: (inout LogConfiguration) -> Void = { _ in }) throws(LogError) -> OpenLog {
        try OpenLog(configuration: self.configuration(configure), logger: self.logs.logger)
    }

    func path(_ name: String) -> String {
        self.directory + "/" + name
    }

    /// File names in the log directory, sorted.
    func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: self.directory).sorted()
    }

    func segments() throws -> [String] {
        try self.files().filter { $0.hasPrefix("segment-") }
    }

    /// The start positions of the segment files, ascending.
    func segmentStarts() throws -> [UInt64] {
        try self.segments().compactMap { name in
            guard case .segment(let start) = LogFileName.parse(name) else { return nil }
            return start
        }
    }

    func snapshots() throws -> [String] {
        try self.files().filter { $0.hasPrefix("snapshot-") && $0.hasSuffix(".snap") }
    }

    func read(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: self.path(name))))
    }

    func write(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: self.path(name)))
    }

    /// Every file's bytes, to prove a check changed nothing.
    func contents() throws -> [String: [UInt8]] {
        var contents: [String: [UInt8]] = [:]
        for name in try self.files() { contents[name] = try self.read(name) }
        return contents
    }

    func restore(_ contents: [String: [UInt8]]) throws {
        for name in try self.files() where contents[name] == nil {
            try FileManager.default.removeItem(atPath: self.path(name))
        }
        for (name, bytes) in contents { try self.write(name, bytes) }
    }

    /// Appends `count` test records starting at index `first`, closes, and returns their ends.
    @discardableResult
    func populate(
        _ count: Int,
        first: Int = 0,
        _ configure: (inout LogConfiguration) -> Void = { _ in }
    ) throws -> [LogPosition] {
        let log = try self.open(configure)
        let ends = try (first..<(first + count)).map { try log.append($0) }
        try log.log.close()
        return ends
    }

    /// The replayed records of a freshly opened log, then closes it.
    func replayAll(_ configure: (inout LogConfiguration) -> Void = { _ in }) throws -> [Replayed] {
        let log = try self.open(configure)
        defer { try? log.log.close() }
        return try log.replayAll()
    }

    /// A deterministic payload for record `index`: 1...61 bytes, never starting with a zero
    /// length byte, different for every index.
    static func payload(_ index: Int) -> [UInt8] {
        let length = 1 + (index * 7) % 61
        var bytes = [UInt8](repeating: 0, count: length)
        var state = UInt64(index) &* 0x9E37_79B9_7F4A_7C15 &+ 1
        for position in bytes.indices {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            bytes[position] = UInt8(truncatingIfNeeded: state)
        }
        withUnsafeBytes(of: UInt32(index).littleEndian) {
            bytes.replaceSubrange(0..<min(4, length), with: $0.prefix(length))
        }
        return bytes
    }

    /// The type byte test records carry.
    static func type(_ index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: index % 7 + 1)
    }
}

/// A replayed record.
struct Replayed: Equatable {
    var type: UInt8
    var payload: [UInt8]
    var end: LogPosition
}

/// What a log's callbacks reported.
final class LogEvents: Sendable {
    let fatalErrors = Mutex<[LogError]>([])
    let durableCalls = Atomic<Int>(0)
    /// Threads sleeping until the next callback; every callback wakes them all.
    let waiters = Mutex<[DispatchSemaphore]>([])

    func wakeAll() {
        for waiter in self.waiters.withLock({ waiters in
            defer { waiters = [] }
            return waiters
        }) {
            waiter.signal()
        }
    }

    /// Sleeps until `done` holds, rechecking after every callback.
    func wait(until done: () -> Bool) {
        while true {
            let waiter = DispatchSemaphore(value: 0)
            self.waiters.withLock { $0.append(waiter) }
            if done() { return }
            waiter.wait()
        }
    }
}

/// An open log plus what its callbacks reported.
final class OpenLog: Sendable {
    let log: ReceiptLog
    let events = LogEvents()

    init(configuration: LogConfiguration, logger: Logger) throws(LogError) {
        let events = self.events
        self.log = try ReceiptLog(
            configuration: configuration,
            logger: logger,
            onDurable: {
                events.durableCalls.add(1, ordering: .relaxed)
                events.wakeAll()
            },
            onFatal: { error in
                events.fatalErrors.withLock { $0.append(error) }
                events.wakeAll()
            }
        )
    }

    var durableCalls: Int {
        self.events.durableCalls.load(ordering: .relaxed)
    }

    var fatal: [LogError] {
        self.events.fatalErrors.withLock { $0 }
    }

    /// Appends test record `index`.
    func append(_ index: Int) throws(LogError) -> LogPosition {
        try self.append(LogFixture.payload(index), type: LogFixture.type(index))
    }

    func append(_ bytes: [UInt8], type: UInt8 = 1) throws(LogError) -> LogPosition {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(LogError) in try self.log.append(type: type, payload: raw) }
        }
        return try result.get()
    }

    /// Sleeps on `onDurable` until the durable position reaches `target` or the log fails.
    func waitUntilDurable(_ target: LogPosition) {
        self.events.wait { self.log.durablePosition >= target || !self.fatal.isEmpty }
    }

    /// Sleeps until `onFatal` has been called.
    func waitUntilFatal() {
        self.events.wait { !self.fatal.isEmpty }
    }

    func replayAll() throws -> [Replayed] {
        var records: [Replayed] = []
        try self.log.replay { type, payload, end in
            records.append(Replayed(type: type, payload: Array(payload), end: end))
        }
        return records
    }
}

extension Replayed {
    /// The fixture record `index`, ending at `end`.
    static func fixture(_ index: Int, end: LogPosition) -> Replayed {
        Replayed(type: LogFixture.type(index), payload: LogFixture.payload(index), end: end)
    }
}

extension Replayed: CustomStringConvertible {
    var description: String {
        "(type \(self.type), \(self.payload.count) bytes, end \(self.end))"
    }
}

extension LogCursor {
    /// Reads until the cursor has caught up, at most `maxBytes` a call; the records as replay
    /// gives them.
    func readAll(maxBytes: Int = 1 << 20) throws -> [Replayed] {
        var records: [Replayed] = []
        while try self.read(
            maxBytes: maxBytes,
            { records.append(Replayed(type: $0.type, payload: Array($0.payload), end: $0.end)) }
        ) > 0 {}
        return records
    }
}
