import Dispatch
import Foundation
import Glibc
import Testing

@testable import ReceiptLog

/// Throughput measurements, off by default: `RECEIPTS_LOG_BENCH=1 swift test -c release --filter LogBenchmark`.
///
/// Prints a table; asserts nothing about speed (benchmarks measure, tests check behaviour).
/// The baselines run in the same invocation on the same disk: a plain `pwrite` + `fdatasync`
/// per record (what durability costs without group commit) and one big `pwrite` + `fdatasync`
/// (the disk's sequential bandwidth).
@Suite(.enabled(if: ProcessInfo.processInfo.environment["RECEIPTS_LOG_BENCH"] == "1"))
struct LogBenchmark {
    static let clock = ContinuousClock()

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func row(_ name: String, records: Int, bytes: Int, seconds: Double) {
        let line = name.padding(toLength: 60, withPad: " ", startingAt: 0)
            + String(format: "%12.0f records/s %9.1f MB/s %8.3f s", Double(records) / seconds,
                Double(bytes) / seconds / 1e6, seconds)
        print(line)
        fflush(nil)
    }

    /// One record per `pwrite` + `fdatasync`: the durable rate without group commit.
    func plainSyncLoop(recordSize: Int, records: Int) throws {
        let fixture = try LogFixture()
        try FileManager.default.createDirectory(atPath: fixture.directory, withIntermediateDirectories: true)
        let fd = open(fixture.path("plain"), O_WRONLY | O_CREAT, 0o644)
        defer { close(fd) }
        let record = [UInt8](repeating: 7, count: recordSize)
        let elapsed = Self.clock.measure {
            for index in 0..<records {
                _ = record.withUnsafeBytes { pwrite(fd, $0.baseAddress, recordSize, off_t(index * recordSize)) }
                fdatasync(fd)
            }
        }
        Self.row("baseline pwrite+fdatasync per record \(recordSize) B", records: records, bytes: records * recordSize,
            seconds: Self.seconds(elapsed))
    }

    /// 64 MiB in 1 MiB `pwrite`s then one `fdatasync`: sequential bandwidth.
    func plainBulkWrite() throws {
        let fixture = try LogFixture()
        try FileManager.default.createDirectory(atPath: fixture.directory, withIntermediateDirectories: true)
        let fd = open(fixture.path("bulk"), O_WRONLY | O_CREAT, 0o644)
        defer { close(fd) }
        let chunk = [UInt8](repeating: 7, count: 1 << 20)
        let elapsed = Self.clock.measure {
            for index in 0..<64 {
                _ = chunk.withUnsafeBytes { pwrite(fd, $0.baseAddress, chunk.count, off_t(index << 20)) }
            }
            fdatasync(fd)
        }
        Self.row("baseline 64 MiB pwrite + one fdatasync", records: 64, bytes: 64 << 20, seconds: Self.seconds(elapsed))
    }

    /// One thread appends as fast as it can; the clock stops when the last record is durable.
    func appendThroughput(policy: FsyncPolicy, recordSize: Int, records: Int, replay: Bool = false) throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.fsyncPolicy = policy }
        let payload = [UInt8](repeating: 3, count: recordSize)
        var last = LogPosition.zero
        let elapsed = try Self.clock.measure {
            try payload.withUnsafeBytes { bytes in
                for _ in 0..<records { last = try log.log.append(type: 1, payload: bytes) }
            }
            log.waitUntilDurable(last)
        }
        let groups = log.durableCalls
        try log.log.close()
        Self.row("append \(policy) \(recordSize) B (\(groups) groups)", records: records,
            bytes: records * recordSize, seconds: Self.seconds(elapsed))
        guard replay else { return }
        let reopened = try fixture.open()
        defer { try? reopened.log.close() }
        var count = 0
        var sum = 0
        let replayElapsed = try Self.clock.measure {
            try reopened.log.replay { type, payload, _ in
                count += 1
                sum &+= Int(type) &+ payload.count
            }
        }
        #expect(count == records)
        Self.row("replay \(recordSize) B records", records: count, bytes: count * recordSize,
            seconds: Self.seconds(replayElapsed))
        let verifyElapsed = try Self.clock.measure { _ = try ReceiptLog.verify(directory: fixture.directory) }
        Self.row("verify (open-time check) \(recordSize) B", records: count, bytes: count * recordSize,
            seconds: Self.seconds(verifyElapsed))
    }

    /// `threads` appenders that each wait for durability before the next append, as services
    /// acknowledging one batch at a time do: shows group commit sharing syncs.
    func closedLoop(threads: Int, perThread: Int, recordSize: Int) throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        let done = DispatchGroup()
        let elapsed = Self.clock.measure {
            for _ in 0..<threads {
                done.enter()
                Thread {
                    let payload = [UInt8](repeating: 5, count: recordSize)
                    for _ in 0..<perThread { log.waitUntilDurable(try! log.append(payload)) }
                    done.leave()
                }.start()
            }
            done.wait()
        }
        let groups = log.durableCalls
        try log.log.close()
        Self.row("closed loop always, \(threads) appenders \(recordSize) B (\(groups) groups)",
            records: threads * perThread, bytes: threads * perThread * recordSize, seconds: Self.seconds(elapsed))
    }

    @Test func throughput() throws {
        print("ReceiptLog benchmark (one process, same disk)")
        try self.plainSyncLoop(recordSize: 100, records: 2_000)
        try self.plainSyncLoop(recordSize: 1024, records: 2_000)
        try self.plainBulkWrite()
        for policy: FsyncPolicy in [.always, .interval(milliseconds: 10), .none] {
            try self.appendThroughput(policy: policy, recordSize: 100, records: 2_000_000, replay: policy == .always)
            try self.appendThroughput(policy: policy, recordSize: 1024, records: 500_000)
        }
        try self.closedLoop(threads: 1, perThread: 2_000, recordSize: 100)
        try self.closedLoop(threads: 64, perThread: 500, recordSize: 100)
    }
}
