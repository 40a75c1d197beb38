import Foundation
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsWire
import ZeroMQ

extension BenchRun {
    /// A replicated ordinal on this machine: a primary and a standby, roles through a real etcd
    /// (deploy/REPLICATION.md), the standby in sync before the clock starts.
    struct ReplicatedOrdinal {
        let etcd: EtcdProcess
        var members: [DaemonProcess]
        /// Each member's HTTP port, for its `/metrics`.
        var httpPorts: [Int]

        /// The members' flags: member `name` of ordinal 0 on `etcd`, the alpha set first, with
        /// `/metrics` on `httpPort`, and `--replication-fallback local` (two members: the survivor of
        /// a failover acknowledges without its lost standby). With `defaults`, every other
        /// replication flag keeps its default (the failover rows); without, the throughput rows'
        /// 2 s lease and 5 s replication timeout.
        static func arguments(
            _ name: String,
            etcd: EtcdProcess,
            ack: String,
            httpPort: Int,
            defaults: Bool
        ) -> [String] {
            [
                "--etcd", etcd.clientURL, "--member", name, "--members", "alpha,beta", "--replication-ack", ack,
                "--replication-fallback", "local", "--http", "127.0.0.1:\(httpPort)",
            ] + (defaults ? [] : ["--lease-ttl-s", "2", "--replication-timeout-ms", "5000"])
        }

        /// How many times `member`'s process was promoted by a takeover (its
        /// `receiptd_replication_promotions_total{reason="takeover"}`, 0 before the first); nil if
        /// its `/metrics` cannot be read.
        func takeovers(of member: Int) -> Int? {
            guard let metrics = LoopbackHTTP.get(port: httpPorts[member], path: "/metrics")?.body else { return nil }
            let prefix = #"receiptd_replication_promotions_total{reason="takeover"} "#
            let line = metrics.split(separator: "\n").first { $0.hasPrefix(prefix) }
            return line.flatMap { Double($0.dropFirst(prefix.count)) }.map { Int($0) } ?? 0
        }

        /// Whether `member`'s `/metrics` says that it is primary with its standby recorded in sync
        /// (so the standby may be promoted).
        func isPrimaryWithStandbyInSync(_ member: Int) -> Bool {
            guard let metrics = LoopbackHTTP.get(port: httpPorts[member], path: "/metrics")?.body else { return false }
            return metrics.contains(#"receiptd_replication_role{role="primary"} 1"#)
                && metrics.contains("\nreceiptd_replication_in_sync_standbys 1")
        }
    }

    /// Starts etcd, then alpha (which takes term 1) and beta (which follows it), and waits until
    /// alpha has beta recorded in sync.
    func replicatedOrdinal(ack: String, defaults: Bool = false) throws -> ReplicatedOrdinal {
        let etcd = try BlockingWait.run(seconds: EtcdProcess.startDeadlineSeconds + 10) { try await EtcdProcess() }
        let ports = [try LoopbackPort.free(), try LoopbackPort.free()]
        let alpha = try daemon(
            ReplicatedOrdinal.arguments("alpha-0", etcd: etcd, ack: ack, httpPort: ports[0], defaults: defaults)
        )
        let beta = try daemon(
            ReplicatedOrdinal.arguments("beta-0", etcd: etcd, ack: ack, httpPort: ports[1], defaults: defaults)
        )
        let ordinal = ReplicatedOrdinal(
            etcd: etcd,
            members: [alpha, beta],
            httpPorts: ports
        )
        try waitUntilInSync(ordinal, primary: 0)
        return ordinal
    }

    /// Waits (at most 30 s) until member `primary` is primary with its standby recorded in sync.
    func waitUntilInSync(_ ordinal: ReplicatedOrdinal, primary: Int) throws {
        let deadline = Monotonic.now() + 30_000_000_000
        while !ordinal.isPrimaryWithStandbyInSync(primary) {
            guard Monotonic.now() < deadline else {
                throw LoadgenError(
                    .timeout,
                    "member \(primary) has no standby in sync: \(ordinal.members[1 - primary].standardError().suffix(2000))"
                )
            }
            usleep(20_000)
        }
    }

    /// Drives `set` into the primary of a fresh replicated ordinal with `--replication-ack ack`.
    func driveReplicated(_ set: FrameSet, _ options: DriveOptions, ack: String) throws -> DriveResult {
        let ordinal = try replicatedOrdinal(ack: ack)
        defer { for member in ordinal.members { member.terminate() } }
        return try LoadDriver(context: context, daemon: ordinal.members[0]).drive(
            set,
            gateways: shape.gateways,
            conversations: shape.conversations,
            options: options
        )
    }

    /// What synchronous replication costs: durable ingest (batched, and one event per frame) and
    /// the event → status latency at a fixed rate, unreplicated, with `--replication-ack local`
    /// and with `standby`, interleaved run by run.
    mutating func replication() throws {
        let rows: [(String, FrameSet, DriveOptions)] = [
            (
                "durable ingest, batched (1000 events/frame)", frames(2_000_000, smoke: 20_000, batchSize: 1000),
                DriveOptions(acknowledged: true, window: 4)
            ),
            (
                "ingest, one event per frame, acknowledged (256 in flight)", singleEventFrames(),
                DriveOptions(acknowledged: true, window: 256)
            ),
        ]
        for (name, set, options) in rows {
            let medians = try interleavedMedians(count: 3) { mode in
                switch mode {
                case 0: try drive(set, options).eventsPerSecond
                case 1: try driveReplicated(set, options, ack: "local").eventsPerSecond
                default: try driveReplicated(set, options, ack: "standby").eventsPerSecond
                }
            }
            table.add(
                "\(name), replicated, --replication-ack local",
                ours: ResultTable.rate(medians[1]),
                baseline: ResultTable.rate(medians[0]) + " (one unreplicated worker)",
                ratio: ResultTable.ratio(medians[1], medians[0]),
                target: "—"
            )
            table.add(
                "\(name), replicated, --replication-ack standby",
                ours: ResultTable.rate(medians[2]),
                baseline: ResultTable.rate(medians[0]) + " (one unreplicated worker)",
                ratio: ResultTable.ratio(medians[2], medians[0]),
                target: "—"
            )
        }
        let rate = smoke ? 5_000.0 : 50_000
        let latencySet = FrameSet.make(
            shape: shape,
            events: count(Int(rate * 5), smoke: 5_000),
            batchSize: 20,
            trackUpdates: true
        )
        let latencyOptions = DriveOptions(acknowledged: true, eventsPerSecond: rate, window: 256, trackLatency: true)
        let runs = try interleavedRuns(count: 3) { mode -> DriveResult in
            switch mode {
            case 0: try drive(latencySet, latencyOptions)
            case 1: try driveReplicated(latencySet, latencyOptions, ack: "local")
            default: try driveReplicated(latencySet, latencyOptions, ack: "standby")
            }
        }
        func percentile(_ mode: Int, _ p: Double) -> Double? {
            let values = runs[mode].compactMap { $0.latencyMicroseconds(p) }
            return values.isEmpty ? nil : ResultTable.median(values)
        }
        for (mode, label) in [(1, "local"), (2, "standby")] {
            table.add(
                "event → status latency at \(Self.count(Int(rate))) events/s (20/frame), --replication-ack \(label): p50 / p99",
                ours: ResultTable.microseconds(percentile(mode, 50)) + " / "
                    + ResultTable.microseconds(percentile(mode, 99)),
                baseline: ResultTable.microseconds(percentile(0, 50)) + " / "
                    + ResultTable.microseconds(percentile(0, 99))
                    + " (unreplicated)",
                target: "—"
            )
        }
        table.note(
            "Replication rows: a primary and a standby receiptd on this machine (both fsync under --fsync always, "
                + "on the same disk), roles through a real etcd 3.4, the standby in sync before the clock starts; "
                + "with --replication-ack standby every acknowledgement and published status waits until the "
                + "standby has fdatasync'd the records too. Baseline: one unreplicated receiptd, the same frames; "
                + "the three modes interleaved run by run, medians of \(repeats). The latency is the status "
                + "update's arrival at a subscriber minus the frame's send time, medians of the runs' percentiles."
        )
    }

    /// Receives read states of `DeviceSyncProbe.reader` on `device` until one reads up to
    /// `sequence` or beyond.
    /// - Throws: `LoadgenError` if none does within `seconds`.
    func waitForReadState(on device: ZMQSocket, upTo sequence: UInt64, seconds: Double) throws {
        let deadline = Monotonic.now() + UInt64(seconds * 1e9)
        try device.setReceiveTimeout(milliseconds: 100)
        while Monotonic.now() < deadline {
            guard let frames = try device.receiveMultipart(), frames.count == 2 else { continue }
            if try ReadStateUpdate.decode(frames[1]).change.state.readUpTo >= sequence { return }
        }
        throw LoadgenError(.timeout, "the read state up to \(sequence) did not reach the other device in \(seconds) s")
    }

    /// Sends `kind` in one-event frames to `member`'s ingest endpoint, every 100 ms with the same
    /// event id, until one is acknowledged without an error (a standby answers NOT_PRIMARY, a
    /// member between roles may not answer).
    func waitForAcknowledgement(
        _ member: DaemonProcess,
        of kind: EventKind,
        sequence: inout UInt64,
        seconds: Double
    ) throws {
        let deadline = Monotonic.now() + UInt64(seconds * 1e9)
        sequence += 1
        let event = Event(id: EventID(source: "failover-probe", sequence: sequence), kind: kind)
        while Monotonic.now() < deadline {
            let socket = try ZMQSocket(context: context, type: .dealer)
            defer { socket.close() }
            try socket.setLinger(milliseconds: 0)
            try socket.connect(member.ingestEndpoint)
            try socket.setReceiveTimeout(milliseconds: 100)
            _ = try socket.send([[], EventBatchCodec.encode([event])])
            if let reply = try socket.receiveMultipart(), let body = reply.last,
                let decoded = try? IngestReply.decode(body), decoded.error == nil
            {
                return
            }
        }
        throw LoadgenError(
            .timeout,
            "\(member.dataDirectory) acknowledged nothing within \(seconds) s: \(member.standardError().suffix(3000))"
        )
    }
}
