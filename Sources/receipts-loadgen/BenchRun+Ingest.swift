import Foundation
import ReceiptsTestKit

extension BenchRun {
    /// Durable ingest, batched, beside the receive-only transport and the wire limit on the same frames.
    mutating func ingestBatched() throws {
        let batched = frames(2_000_000, smoke: 20_000, batchSize: 1000)
        let (ours, limits) = try beside(batched, DriveOptions(acknowledged: true, window: 4))
        addIngestRow(
            "durable ingest, batched (1000 events/frame, acknowledged after fsync)",
            ours: ours,
            limits,
            target: ">= 1M events/s"
        )
    }

    /// Batched ingest from gateways that pipeline little (2 frames of 500 events in flight each),
    /// beside the wire limit on the same frames and, with `baseline`, another build's receiptd on
    /// the same frames, all interleaved; with receiptd's CPU per event for each build.
    /// - Parameter baseline: Another build's receiptd (issue 24 compares with da708f3's), or nil.
    mutating func ingestLittlePipelining(baseline: URL?) throws {
        let set = frames(1_000_000, smoke: 10_000, batchSize: 500)
        let options = DriveOptions(acknowledged: true, window: 2)
        let runs = try interleavedRuns(count: baseline == nil ? 2 : 3) { index -> DriveResult in
            switch index {
            case 0: return try drive(set, options)
            case 1:
                let rate = try WireLimitBaseline.measure(set, options, shape: shape, context: context)
                return DriveResult(events: set.eventCount, seconds: Double(set.eventCount) / rate)
            default: return try drive(set, options, binary: baseline)
            }
        }
        let ours = Self.medianRun(runs[0], by: \.eventsPerSecond)
        let wire = ResultTable.median(runs[1].map(\.eventsPerSecond))
        func cpu(_ result: DriveResult) -> String {
            let events = Double(max(result.events, 1))
            let total = String(format: "%.2f µs CPU/event", result.daemonCPUSeconds * 1e6 / events)
            guard result.workerCPUSeconds > 0 else { return total }
            return total + String(format: " (worker thread %.2f)", result.workerCPUSeconds * 1e6 / events)
        }
        table.add(
            "durable ingest, batched, 2 frames of 500 events in flight per gateway",
            ours: ResultTable.rate(ours.eventsPerSecond) + ", " + cpu(ours),
            baseline: ResultTable.rate(wire) + " wire limit",
            ratio: ResultTable.ratio(ours.eventsPerSecond, wire),
            target: ">= 0.7x wire"
        )
        guard let baseline, runs.count == 3 else { return }
        let earlier = Self.medianRun(runs[2], by: \.eventsPerSecond)
        table.add(
            "durable ingest, batched, 2 frames of 500 in flight: this build vs \(baseline.path)",
            ours: ResultTable.rate(ours.eventsPerSecond) + ", " + cpu(ours),
            baseline: ResultTable.rate(earlier.eventsPerSecond) + ", " + cpu(earlier),
            ratio: ResultTable.ratio(ours.eventsPerSecond, earlier.eventsPerSecond),
            target: ">= 1.00x"
        )
        table.note(
            "Little pipelining: \(shape.gateways) gateway DEALERs, each with at most 2 acknowledged frames of 500 "
                + "events in flight; this build's receiptd, the wire limit and \(baseline.lastPathComponent) at "
                + "\(baseline.path) take turns on the same frames, \(repeats) rounds, medians. CPU: receiptd's user + "
                + "system time over the drive (/proc/<pid>/stat, every thread) per event; in brackets the "
                + "receiptd-worker thread's alone (/proc/<pid>/task/*/stat)."
        )
    }

    /// One event per frame: raw frames acknowledged (DEALER) and fire-and-forget (PUB) beside
    /// the receive-only transport and the wire limit, then the same events through ReceiptsClient,
    /// one per `send` call from many concurrent callers, beside the acknowledged raw-frame row of
    /// this same run.
    /// - Parameters:
    ///   - fireAndForget: Include the fire-and-forget row.
    ///   - clientCallers: One ReceiptsClient row per count of concurrent callers.
    mutating func ingestSingle(fireAndForget: Bool, clientCallers: [Int]) throws {
        let single = singleEventFrames()
        let (acknowledged, limits) = try beside(single, DriveOptions(acknowledged: true, window: 256))
        addIngestRow(
            "ingest, one event per frame, acknowledged (256 in flight per gateway)",
            ours: acknowledged,
            limits,
            target: ">= 0.40x raw"
        )
        if fireAndForget {
            let fireAndForget = try median { try drive(single, DriveOptions(acknowledged: false)).eventsPerSecond }
            addIngestRow(
                "ingest, one event per frame, fire-and-forget (PUB → SUB)",
                ours: fireAndForget,
                limits,
                target: ">= 0.40x raw"
            )
        }
        table.note(
            "Raw baseline (receive-only): the same encoded frames over PUSH/PULL on ipc:// into a second process "
                + "that only runs protobuf-c's receipts__v1__event_batch__unpack/free_unpacked (CReceiptsProto "
                + "directly, no Swift values): no engine, no log, no fsync, no replies, no status updates."
        )
        table.note(
            "Wire limit: the same frames from the same gateway DEALERs (same window, same clock: first send to "
                + "last reply) into a second process (receipts-loadgen sink --publish) that does what receiptd must do "
                + "on the wire and nothing else: ROUTER receive, EventBatchCodec.decode (protobuf-c into Swift "
                + "values), one status update per event published through receiptd's StatusPublisher (topic frame "
                + "+ encoded StatusUpdate of the event's conversation, message and user) on a PUB with no "
                + "subscriber, as receiptd's in these rows, and one IngestReply (one result per event) per frame "
                + "back through the ROUTER. No engine, no log, no fsync. receiptd publishes one update per changed "
                + "message per batch, so on batched frames it sends fewer updates than this limit. Measured "
                + "interleaved with receiptd and the raw baseline (receiptd, raw, wire in each of the repeats)."
                + (fireAndForget ? " The fire-and-forget row's baselines are the acknowledged row's." : "")
        )
        var frameNotes: [String] = []
        for callers in clientCallers {
            let result = try medianResult { try driveThroughClient(single, callers: callers) }
            table.add(
                "ingest through ReceiptsClient, one event per send call, \(callers) concurrent callers (acknowledged)",
                ours: ResultTable.rate(result.eventsPerSecond),
                baseline: ResultTable.rate(acknowledged) + " (raw frames, one event each, acknowledged)",
                ratio: ResultTable.ratio(result.eventsPerSecond, acknowledged),
                target: "—"
            )
            let frames = result.clientFrames ?? 0
            frameNotes.append(
                "\(callers) callers: \(ResultTable.ratio(result.eventsPerSecond, limits.receiveOnly)) of the raw transport, "
                    + "\(frames) frames (" + String(format: "%.1f", Double(result.events) / Double(max(frames, 1)))
                    + " events/frame), \(result.clientFramesResent) re-sent, "
                    + String(format: "%.1f", result.clientCPUSeconds * 1e6 / Double(max(result.events, 1)))
                    + " µs of client CPU per event"
            )
        }
        if !clientCallers.isEmpty {
            table.note(
                "ReceiptsClient rows: the one-event-per-frame rows' events (decoded from those frames before the clock, "
                    + "ids kept, so the duplicates are the same), each in its own send(identified:) call awaited by one "
                    + "of N tasks in a task group (caller k sends events k, k+N, ...), through one client with its "
                    + "default settings (linger 0, up to 1000 events/frame, 8 frames in flight): concurrent calls "
                    + "share frames. Timed from the first call to the last outcome. Ratio: to the acknowledged "
                    + "raw-frame row of this run. " + frameNotes.joined(separator: "; ") + "."
            )
        }
    }

    /// receiptd, the receive-only transport and the wire limit on `set`, interleaved: the medians.
    private func beside(_ set: FrameSet, _ options: DriveOptions) throws -> (Double, TransportLimits) {
        let medians = try interleavedMedians(count: 3) { index in
            switch index {
            case 0: try drive(set, options).eventsPerSecond
            case 1: try RawTransportBaseline.measure(set, context: context)
            default: try WireLimitBaseline.measure(set, options, shape: shape, context: context)
            }
        }
        return (medians[0], TransportLimits(receiveOnly: medians[1], wire: medians[2]))
    }

    /// An ingest row with both limits in the baseline cell and receiptd's ratio to each.
    private mutating func addIngestRow(_ measure: String, ours: Double, _ limits: TransportLimits, target: String) {
        table.add(
            measure,
            ours: ResultTable.rate(ours),
            baseline: ResultTable.rate(limits.receiveOnly) + " raw (zmq + unpack) · " + ResultTable.rate(limits.wire)
                + " wire limit",
            ratio: ResultTable.ratio(ours, limits.receiveOnly) + " raw · " + ResultTable.ratio(ours, limits.wire)
                + " wire",
            target: target
        )
    }

    /// Event → status latency at fixed offered rates and flat out.
    mutating func latency(rates: [Double], batch: Int, seconds: Double) throws {
        let duration = smoke ? 0.5 : seconds * scale
        for rate in rates {
            let set = FrameSet.make(
                shape: shape,
                events: max(batch, Int(rate * duration)),
                batchSize: batch,
                trackUpdates: true
            )
            var results: [(result: DriveResult, stages: StageBreakdown?)] = []
            for _ in 0..<repeats {
                // Served on a port of its own, to read the stage histograms before and after.
                let port = try LoopbackPort.free()
                var before: StageBreakdown?
                var after: StageBreakdown?
                let result = try drive(
                    set,
                    DriveOptions(acknowledged: true, eventsPerSecond: rate, window: 64, trackLatency: true),
                    arguments: ["--http", "127.0.0.1:\(port)"],
                    beforeMeasuring: { before = StageBreakdown.scrape(port: port) },
                    afterLoad: { after = StageBreakdown.scrape(port: port) }
                )
                results.append((result, before.flatMap { before in after?.subtracting(before) }))
            }
            let (result, stages) = results.sorted {
                ($0.result.latencyMicroseconds(99) ?? 0) < ($1.result.latencyMicroseconds(99) ?? 0)
            }[(results.count - 1) / 2]
            table.add(
                "event → status latency at \(ResultTable.rate(rate)) offered, durable (p50 / p99 / p99.9)",
                ours: latencyCell(result),
                baseline: syncCell,
                target: rate >= 200_000 ? "p99 <= 2 ms" : "—"
            )
            let gateway = [50.0, 99].map { ResultTable.microseconds(result.acknowledgementMicroseconds($0)) }
            table.add(
                "where a frame's time goes at \(ResultTable.rate(rate)) offered: mean per stage (µs)",
                ours: "gateway, due → acknowledged: p50 \(gateway[0]), p99 \(gateway[1]); receiptd: "
                    + (stages?.cell ?? "n/a (/metrics did not answer)")
            )
            noteDelivery(result, label: "\(ResultTable.rate(rate))")
        }
        let set = FrameSet.make(
            shape: shape,
            events: count(1_000_000, smoke: 10_000),
            batchSize: batch,
            trackUpdates: true
        )
        let saturated = try drive(set, DriveOptions(acknowledged: true, window: 16, trackLatency: true))
        table.add(
            "event → status latency at saturation (flat out, \(batch)/frame, 16 in flight per gateway)",
            ours: latencyCell(saturated) + " at " + ResultTable.rate(saturated.eventsPerSecond),
            baseline: syncCell
        )
        noteDelivery(saturated, label: "saturation")
        table.note(
            "Latency: \(batch) events per frame, acknowledged ingest; measured from when the frame was due (fixed "
                + "rate, so a stalled sender cannot hide a stall) or sent (flat out) to when a subscriber in the load "
                + "generator received the status update that event caused, on one monotonic clock. The time a "
                + "gateway spends filling a batch is not included. Its baseline is one 4 KiB pwrite + fdatasync "
                + "on the same disk: no durable acknowledgement or update can come sooner. Where a frame's time "
                + "goes: receiptd's receiptd_ingest_stage_seconds (a sample of the acknowledged frames, the run of the "
                + "median p99) between a scrape after the setup and one after the load: apply (decode and "
                + "engine), append, commit_wait (for the log's writer thread), write, fdatasync, completion (from "
                + "durable to the worker completing it), reply (its updates handed over and its reply sent), "
                + "publish (per batch of the publishing thread, oldest update to sent); p99 is the upper bound "
                + "of its histogram bucket. The gateway's own acknowledgement latency (from when the frame was "
                + "due to its reply, at the DEALER) less receiptd's is the time in the sockets both ways, the "
                + "ingest socket's queue before the worker reads a frame included."
        )
    }

    /// The disk's own fdatasync latency, the floor under any durable event → update latency.
    private var syncCell: String {
        guard let syncLatency else { return "—" }
        return syncLatency.map { ResultTable.microseconds($0) }.joined(separator: " / ") + " (one fdatasync)"
    }

    private func latencyCell(_ result: DriveResult) -> String {
        [50.0, 99, 99.9].map { ResultTable.microseconds(result.latencyMicroseconds($0)) }.joined(separator: " / ")
    }

    private mutating func noteDelivery(_ result: DriveResult, label: String) {
        guard let updates = result.updates else { return }
        let expected = result.accepted
        if updates.matched < expected * 99 / 100 || updates.gaps > 0 {
            table.note(
                "\(label): \(updates.matched) of \(expected) accepted events' updates matched, \(updates.gaps) missing "
                    + "by sequence (PUB high-water mark), achieved \(ResultTable.rate(result.eventsPerSecond))."
            )
        }
    }

    /// The disk's limit.
    mutating func disk() throws {
        let directory = try TemporaryDirectory.make(prefix: "rd")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let duration = smoke ? 0.3 : 3 * scale
        let small = try DiskBaseline.syncLoop(directory: directory, size: 4096, seconds: duration)
        let percentiles = [50.0, 99, 99.9].map { Double(small.latency.valueAtPercentile($0)) / 1000 }
        syncLatency = percentiles
        table.add(
            "disk: 4 KiB pwrite + fdatasync loop (one sync p50 / p99 / p99.9)",
            ours: "—",
            baseline: ResultTable.rate(small.perSecond, "syncs/s") + " ("
                + percentiles.map { ResultTable.microseconds($0) }.joined(separator: " / ") + ")"
        )
        let large = try DiskBaseline.syncLoop(directory: directory, size: 1 << 20, seconds: duration)
        table.add(
            "disk: 1 MiB pwrite + fdatasync loop",
            ours: "—",
            baseline: String(format: "%.0f MB/s", large.megabytesPerSecond)
        )
    }
}
