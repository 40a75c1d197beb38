import Foundation
import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsReplication
import ReceiptsWire

@testable import ReceiptsService

/// A primary (a `PipelineFixture` and a `Shipper` over its log) and a `StandbyReplica` on a
/// directory of its own, with no socket between them: every message goes through the wire
/// codecs (encoded to frames and decoded again) as it would through the replication endpoint.
final class ReplicationPair {
    let primary: PipelineFixture
    let shipper: Shipper
    let standbyRoot: String
    let standbyConfiguration: ServiceConfiguration
    var standby: StandbyReplica
    var settings: ReplicationSettings
    /// Every message the shipper sent, in order.
    private(set) var shipped: [ReplicationMessage] = []
    /// Every request the standby sent, in order.
    private(set) var requests: [ReplicationRequest] = []
    /// The standby connection's routing id.
    static let peer = Array("standby-peer".utf8)
    /// The most the primary claims as acknowledged (its durable position otherwise).
    let acknowledgedCap = Cap()
    /// A monotonic clock the test moves by hand.
    var now: Int64 = 1_000

    /// - Parameter leaseDeadline: The primary's lease deadline, in nanoseconds on the pair's
    ///   clock (`now` is in milliseconds); nil for no lease.
    init(
        primary: PipelineFixture? = nil,
        leaseDeadline: (@Sendable () -> UInt64)? = nil,
        standbyDirectory: String? = nil,
        standbyConfiguration configureStandby: (inout ServiceConfiguration) -> Void = { _ in },
        replication configure: (inout ReplicationSettings) -> Void = { _ in }
    ) throws {
        let primary = try primary ?? PipelineFixture()
        self.primary = primary
        var settings = ReplicationSettings(
            member: "receiptd-b-0",
            role: .standby(primaryEndpoint: "inproc://none"),
            endpoint: "inproc://b"
        )
        configure(&settings)
        self.settings = settings
        var primarySettings = settings
        primarySettings.member = "receiptd-0"
        primarySettings.role = .primary
        // Everything recovered was acknowledged before: the gate starts there.
        primary.gate?.update(replicatedPosition: primary.pipeline.log.durablePosition.offset, refusal: .none)
        shipper = Shipper(
            log: primary.pipeline.log,
            terms: primary.pipeline.terms,
            settings: primarySettings,
            workerIndex: primary.configuration.workerIndex,
            engineSettings: ReplaySettings.recordedText(directory: primary.configuration.dataDirectory),
            logger: Self.logger,
            acknowledging: primary.gate.map { Shipper.Acknowledging(gate: $0, leaseDeadline: leaseDeadline) },
            now: 1_000,
            acknowledged: { [frontier = primary.pipeline.frontier, cap = acknowledgedCap] in
                min(frontier.position.offset, cap.value)
            }
        )
        if let standbyDirectory {
            standbyRoot = standbyDirectory
        } else {
            var template = Array("/tmp/receipt-standby-test-XXXXXX".utf8CString)
            guard let path = mkdtemp(&template) else { throw POSIXError(.EIO) }
            standbyRoot = String(cString: path)
        }
        var standbyConfiguration = ServiceConfiguration(dataDirectory: standbyRoot + "/data")
        configureStandby(&standbyConfiguration)
        self.standbyConfiguration = standbyConfiguration
        standby = try StandbyReplica(
            configuration: standbyConfiguration,
            settings: settings,
            logger: Self.logger,
            counters: ServiceCounters(),
            wake: {}
        )
    }

    deinit {
        standby.close()
        try? FileManager.default.removeItem(atPath: standbyRoot)
    }

    /// Closes the standby and opens it again on the same directory (an in-process restart:
    /// its engine recovered from its whole log).
    func restartStandby() throws {
        standby.close()
        standby = try StandbyReplica(
            configuration: standbyConfiguration,
            settings: settings,
            logger: Self.logger,
            counters: ServiceCounters(),
            wake: {}
        )
    }

    /// A value the test changes under the shipper.
    final class Cap {
        var value = UInt64.max
    }

    static let logger = Logger(label: "replication-test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Sends `request` from the standby to the shipper through the codec, and the answer back.
    private func deliver(_ request: ReplicationRequest) throws {
        let decoded = try ReplicationRequest.decode(request.encode())
        requests.append(decoded)
        if let answer = shipper.receive(decoded, from: Self.peer, now: now) {
            try deliver(answer.message)
        }
    }

    /// Hands one message from the shipper to the standby through the codec, and its requests back.
    private func deliver(_ message: ReplicationMessage) throws {
        let frames = message.encode()
        shipped.append(try ReplicationMessage.decode(frames))
        for request in try standby.receive(frames, now: now) {
            try deliver(request)
        }
    }

    /// The standby opens its session.
    func start() throws {
        try deliver(standby.start(now: now))
    }

    /// Moves messages both ways until neither side has anything to say, the clock stepping
    /// `step` milliseconds a round; at most `rounds` rounds.
    ///
    /// - Parameter accepting: Whether the "socket" takes each of the shipper's messages.
    func run(rounds: Int = 2000, step: Int64 = 1, accepting: (ReplicationMessage) -> Bool = { _ in true }) throws {
        for _ in 0..<rounds {
            now += step
            var outgoing: [Shipper.Outgoing] = []
            shipper.ship(now: now) { message in
                guard accepting(message.message) else { return false }
                outgoing.append(message)
                return true
            }
            for message in outgoing { try deliver(message.message) }
            for request in try standby.advance(now: now) { try deliver(request) }
            if outgoing.isEmpty, isCaughtUp { return }
        }
    }

    /// Whether the standby has applied everything the primary made durable.
    var isCaughtUp: Bool {
        standby.applied == primary.pipeline.log.durablePosition
            && primary.pipeline.log.durablePosition == primary.pipeline.log.appendedPosition
    }

    /// Runs the primary's pipeline and the exchange until the standby has applied everything
    /// the primary made durable and the primary answered everything; at most 20 s (fsyncs on a
    /// loaded CI machine).
    func catchUp() async throws {
        try PipelineFixture.poll(seconds: 20) {
            // The exchange first, then the pipeline: what the standby just confirmed is answered
            // before the check. The other way round, an exchange that ended slow (fsyncs on a
            // loaded machine) past the deadline left the last reply unanswered, though the
            // standby had applied everything.
            try run(rounds: 50)
            try primary.pipeline.advance(now: ServiceClock.monotonicMilliseconds())
            return isCaughtUp && primary.pipeline.awaiting.isEmpty
        } failure: {
            "the standby applied \(standby.applied), the primary's durable end is "
                + "\(primary.pipeline.log.durablePosition); \(primary.pipeline.awaiting.count) items wait; "
                + "the standby's log: appended \(standby.log.appendedPosition), durable "
                + "\(standby.log.durablePosition); the pair's clock at \(now); last shipped "
                + "\(shipped.suffix(3)); last requests \(requests.suffix(3))"
        }
    }

    /// Waits until the standby's log made everything appended durable, then advances it; at most 20 s.
    func settleStandby() async throws {
        try PipelineFixture.poll(seconds: 20) {
            standby.log.durablePosition >= standby.log.appendedPosition
        } failure: {
            "the standby's log is not durable after 20 s"
        }
        now += 1
        for request in try standby.advance(now: now) { try deliver(request) }
    }

    /// The records of a log directory, replayed by a fresh open: type, payload and end of each.
    static func records(in directory: String) throws -> [[UInt8]] {
        var configuration = LogConfiguration(directory: directory)
        configuration.fsyncPolicy = .none
        let log = try ReceiptLog(configuration: configuration, logger: logger, onDurable: {}, onFatal: { _ in })
        defer { try? log.close() }
        var records: [[UInt8]] = []
        try log.replay { type, payload, end in
            records.append([type] + Array(payload) + withUnsafeBytes(of: end.offset.littleEndian) { Array($0) })
        }
        return records
    }
}
