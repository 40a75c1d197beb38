import Foundation
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsWire
import Synchronization
import ZeroMQ

extension BenchRun {
    /// How the failover rows stop a primary.
    enum PrimaryFault: String, CaseIterable {
        /// The process dies: its connections close at once.
        case sigkill = "SIGKILL"
        /// The process freezes: its connections stay open, silent (a partition, a long pause).
        case sigstop = "SIGSTOP"
    }

    /// Failover time at the default replication settings (deploy/REPLICATION.md, section 6.5): a
    /// replicated ordinal's primary is SIGKILLed `kills` times, then SIGSTOPped as many times; each
    /// time, the time from the fault to the first acknowledgement by the new primary. The killed
    /// member is started again, the frozen one resumed, and each rejoins as a standby and is
    /// recorded in sync before the next fault, so the roles alternate.
    ///
    /// The probe that finds the new primary is a read, sent from the moment of the fault, of a
    /// message acknowledged just before it; a raw SUB on the reader's whole topic frame at both
    /// members (another device of the reader's) times the read state's arrival from the fault too.
    mutating func failover(kills: Int) throws {
        let ordinal = try replicatedOrdinal(ack: "standby", defaults: true)
        defer { for member in ordinal.members { member.terminate() } }
        let device = try ZMQSocket(context: context, type: .sub)
        defer { device.close() }
        try device.subscribe(Partitioning.exactUserTopic(for: DeviceSyncProbe.reader))
        for member in ordinal.members { try device.connect(member.publishEndpoint) }
        let conversation = DeviceSyncProbe.conversation
        var sequence: UInt64 = 0
        try waitForAcknowledgement(
            ordinal.members[0],
            of: .conversationUpserted(
                conversation: conversation,
                kind: .direct,
                members: [DeviceSyncProbe.sender, DeviceSyncProbe.reader]
            ),
            sequence: &sequence,
            seconds: 10
        )
        var takeover: [PrimaryFault: [Double]] = [:]
        var deviceSync: [PrimaryFault: [Double]] = [:]
        var round: UInt64 = 0
        // Faults after which the survivor was promoted by a takeover, not by the lease's expiry.
        var tookOver = 0
        // The ordinal starts with member 0 primary and its standby in sync; each round ends so.
        var primaryIndex = 0
        for fault in PrimaryFault.allCases {
            for _ in 1...kills {
                round += 1
                let (primary, survivor) = (ordinal.members[primaryIndex], ordinal.members[1 - primaryIndex])
                let message = "f\(round)"
                try waitForAcknowledgement(
                    primary,
                    of: .messageSent(
                        conversation: conversation,
                        message: message,
                        sender: DeviceSyncProbe.sender,
                        isSystem: false
                    ),
                    sequence: &sequence,
                    seconds: 10
                )
                let takeoversBefore = ordinal.takeovers(of: 1 - primaryIndex)
                // Before the signal: `kill9()` also waits for the process to be reaped.
                let faulted = Monotonic.now()
                switch fault {
                case .sigkill: primary.kill9()
                case .sigstop: kill(primary.processIdentifier, SIGSTOP)
                }
                try waitForAcknowledgement(
                    survivor,
                    of: .read(conversation: conversation, user: DeviceSyncProbe.reader, message: message),
                    sequence: &sequence,
                    seconds: 30
                )
                takeover[fault, default: []].append(Monotonic.seconds(from: faulted, to: Monotonic.now()))
                if let before = takeoversBefore, let after = ordinal.takeovers(of: 1 - primaryIndex), after > before {
                    tookOver += 1
                }
                try waitForReadState(on: device, upTo: round, seconds: 10)
                deviceSync[fault, default: []].append(Monotonic.seconds(from: faulted, to: Monotonic.now()))
                switch fault {
                case .sigkill: _ = try primary.start()
                case .sigstop: kill(primary.processIdentifier, SIGCONT)
                }
                primaryIndex = 1 - primaryIndex
                try waitUntilInSync(ordinal, primary: primaryIndex)
            }
        }
        func cell(_ values: [Double]) -> String {
            ResultTable.seconds(ResultTable.median(values)) + " / " + ResultTable.seconds(values.max() ?? 0)
        }
        for fault in PrimaryFault.allCases {
            table.add(
                "failover: \(fault.rawValue) of the primary → first acknowledgement by the new one, \(kills) faults: "
                    + "p50 / max",
                ours: cell(takeover[fault] ?? []),
                baseline: "lease TTL 3 s (the default)",
                target: "p50 <= 1 s, max <= 2 s"
            )
        }
        for fault in PrimaryFault.allCases {
            table.add(
                "device sync across a failover: a read sent from the primary's \(fault.rawValue) → its read state on "
                    + "another device, \(kills) faults: p50 / max",
                ours: cell(deviceSync[fault] ?? []),
                baseline: "the failover row",
                target: "—"
            )
        }
        table.note(
            "Failover: two members and a real etcd on this machine, every replication flag at its default "
                + "(--replication-ack standby, --replication-takeover-ms 500, --lease-ttl-s 3) but "
                + "--replication-fallback local (with two members, the survivor acknowledges without its lost "
                + "standby); the clock runs from the fault to the first acknowledged frame at the survivor's ingest "
                + "endpoint (a one-event frame, a read of a message acknowledged before the fault, sent every 100 "
                + "ms). It covers the standby noticing the silence (500 ms without a message from the primary, "
                + "which sends one at least every 50 ms), reading the keys, the takeover and campaign transactions, "
                + "the restart of the survivor's loop as primary (recovery of its log) and the new term's first "
                + "record. \(tookOver) of the \(2 * kills) faults ended in a takeover (the survivor's "
                + "receiptd_replication_promotions_total{reason=\"takeover\"} went up), the others in the lease's "
                + "expiry. The probe is sent every 100 ms, so the times are to 0.1 s. The device-sync rows time the same read from the fault to its read "
                + "state at a raw SUB connected to both members."
        )
    }

    /// No failover on a loaded machine (deploy/REPLICATION.md, section 6.5): a replicated ordinal
    /// at the default settings takes a steady stream of acknowledged frames for `minutes` while
    /// two threads keep both cores busy and a third writes and fdatasyncs 64 MiB at a time on the
    /// members' disk; then its term must still be the first.
    mutating func falseFailovers(minutes: Double) throws {
        let ordinal = try replicatedOrdinal(ack: "standby", defaults: true)
        defer { for member in ordinal.members { member.terminate() } }
        let load = try MachineLoad(spinners: 2, directory: ordinal.members[0].dataDirectory)
        let stream = try SteadyIngest(context: context, members: ordinal.members)
        let deadline = Monotonic.now() + UInt64(minutes * 60e9)
        while Monotonic.now() < deadline { try stream.sendOne() }
        let fdatasyncs = load.finish()
        let metrics = ordinal.httpPorts.map { port in
            LoopbackHTTP.get(port: port, path: "/metrics", timeoutMilliseconds: 5000)?.body ?? ""
        }
        /// The value of the sample `name` (without labels) in `text`.
        func sample(_ name: String, in text: String) -> Double? {
            let line = text.split(separator: "\n").first { $0.hasPrefix("\(name) ") }
            return line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
        }
        let terms = try zip(ordinal.httpPorts, metrics).map { port, metrics -> UInt64 in
            guard let term = sample("receiptd_replication_term", in: metrics), term >= 1 else {
                throw LoadgenError(
                    .protocolViolation,
                    "no replication term in /metrics on port \(port): \(metrics.prefix(500))"
                )
            }
            return UInt64(term)
        }
        let failovers = (terms.max() ?? 1) - 1
        let fsyncs = (
            sample("receiptd_fsync_duration_seconds_sum", in: metrics[0]) ?? 0,
            sample("receiptd_fsync_duration_seconds_count", in: metrics[0]) ?? 0
        )
        let primaryFdatasync = fsyncs.1 > 0 ? ResultTable.seconds(fsyncs.0 / fsyncs.1) : "n/a"
        table.add(
            "no failover on a loaded machine: failovers in \(minutes) min (both cores busy, the primary's "
                + "fdatasync \(primaryFdatasync) on average, a disk hog's p50 / p99 \(ResultTable.seconds(ResultTable.percentile(fdatasyncs, 50))) / "
                + "\(ResultTable.seconds(ResultTable.percentile(fdatasyncs, 99))))",
            ours: "\(failovers) (\(stream.acknowledged) frames acknowledged, \(stream.refused) refused, "
                + "slowest \(ResultTable.seconds(stream.slowestSeconds)))",
            baseline: "—",
            target: "0"
        )
        table.note(
            "No failover on a loaded machine: the failover rows' ordinal takes one acknowledged frame of 20 reads "
                + "at a time from one gateway for the whole run, while two threads spin on both cores and a third "
                + "writes 64 MiB and fdatasyncs it, over and over, beside the members' logs on the same disk. A "
                + "failover shows as a term past the first at the end."
        )
    }
}

/// Load on this machine for the false-failover row: threads that spin, and one that writes and
/// fdatasyncs a file in a loop, timing each fdatasync.
private final class MachineLoad: Sendable {
    private let stopRequested = Atomic<Bool>(false)
    private let running = Atomic<Int>(0)
    private let fdatasyncSeconds = Mutex<[Double]>([])

    /// Starts `spinners` spinning threads and the disk hog, writing under `directory`.
    init(spinners: Int, directory: String) throws {
        let path = "\(directory)/disk-hog"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw LoadgenError(.process, "cannot open \(path): \(errno)") }
        for _ in 0..<spinners {
            start { load in
                var spins: UInt64 = 0
                while !load.isStopping { spins &+= 1 }
            }
        }
        start { load in
            let block = [UInt8](repeating: 0x5a, count: 64 << 20)
            var offset: off_t = 0
            while !load.isStopping {
                _ = block.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, offset) }
                // Overwrite the same 512 MiB: dirty pages to flush every time, without filling the disk.
                offset = (offset + off_t(block.count)) % (512 << 20)
                let started = Monotonic.now()
                fdatasync(descriptor)
                let seconds = Monotonic.seconds(from: started, to: Monotonic.now())
                load.fdatasyncSeconds.withLock { $0.append(seconds) }
            }
            close(descriptor)
            unlink(path)
        }
    }

    private var isStopping: Bool { stopRequested.load(ordering: .relaxed) }

    /// Runs `body` on a thread of its own, counted in `running`.
    private func start(_ body: @escaping @Sendable (MachineLoad) -> Void) {
        running.add(1, ordering: .relaxed)
        let thread = Thread { [self] in
            body(self)
            running.subtract(1, ordering: .releasing)
        }
        thread.name = "loadgen-load"
        thread.start()
    }

    /// Stops every thread; returns the fdatasync times in seconds.
    func finish() -> [Double] {
        stopRequested.store(true, ordering: .releasing)
        while running.load(ordering: .acquiring) > 0 { usleep(2000) }
        return fdatasyncSeconds.withLock { $0 }
    }
}

/// One gateway sending acknowledged frames of 20 reads to whichever member is primary, one at a
/// time, counting what was acknowledged and refused and the slowest answer.
private final class SteadyIngest {
    private let context: ZMQContext
    private let members: [DaemonProcess]
    private var socket: ZMQSocket?
    private var sequence: UInt64 = 0
    private(set) var acknowledged = 0
    private(set) var refused = 0
    private(set) var slowestSeconds = 0.0
    private var target = 0

    /// Sends the conversation the reads are of, to the first member (the first term's primary).
    init(context: ZMQContext, members: [DaemonProcess]) throws {
        self.context = context
        self.members = members
        try sendOne(
            [.conversationUpserted(conversation: "steady", kind: .group, members: ["u0", "u1", "u2"])]
                + (0..<20).map {
                    .messageSent(conversation: "steady", message: "s\($0)", sender: "u0", isSystem: false)
                }
        )
    }

    /// Sends one frame of 20 reads and waits for its answer (at most 2 s); a refusal or no
    /// answer moves the next frame to the other member.
    func sendOne() throws {
        try sendOne(
            (0..<20).map { index in
                .read(conversation: "steady", user: "u\(1 + index % 2)", message: "s\(index)")
            }
        )
    }

    private func sendOne(_ kinds: [EventKind]) throws {
        let events = kinds.map { kind in
            sequence += 1
            return Event(id: EventID(source: "steady", sequence: sequence), kind: kind)
        }
        let socket = try self.socket ?? connect()
        let started = Monotonic.now()
        _ = try socket.send([[], EventBatchCodec.encode(events)])
        guard let reply = try socket.receiveMultipart(), let body = reply.last,
            let decoded = try? IngestReply.decode(body), decoded.error == nil
        else {
            refused += 1
            socket.close()
            self.socket = nil
            target = 1 - target
            return
        }
        acknowledged += 1
        slowestSeconds = max(slowestSeconds, Monotonic.seconds(from: started, to: Monotonic.now()))
    }

    private func connect() throws -> ZMQSocket {
        let socket = try ZMQSocket(context: context, type: .dealer)
        try socket.setLinger(milliseconds: 0)
        try socket.setReceiveTimeout(milliseconds: 2000)
        try socket.connect(members[target].ingestEndpoint)
        self.socket = socket
        return socket
    }

    deinit { socket?.close() }
}
