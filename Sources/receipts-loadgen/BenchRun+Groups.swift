import Foundation
import ReceiptsCore
import ReceiptsTestKit

extension BenchRun {
    /// Receipts in groups of 10 to 10,000 members (issue 23), in this process: the engine alone,
    /// so that what grows with the group is the engine's work and nothing else's.
    ///
    /// For each size, messages are sent one after another and the same `readers` members (spread
    /// over the group) read each as it arrives, so that every read advances its reader by exactly
    /// one message: the reads-per-second row shows whether applying one read costs more in a
    /// bigger group. (A read that catches up on k messages updates k messages' counts, whatever
    /// the group's size.) The "Read By" rows time a page of the who-read-it sheet (the first, and
    /// one from the middle of the readers) and the whole sheet; the engine reports the read states
    /// it would publish, counted per read.
    mutating func groups() throws {
        let sizes = smoke ? [10, 100] : [10, 100, 1_000, 10_000]
        let messages = count(20_000, smoke: 500)
        let readers = 9
        var readsPerSecond: [Int: Double] = [:]
        var stateBytes: [Int: Int] = [:]
        // The first size runs twice, the first time only to warm the process up (allocator,
        // caches, page faults), which otherwise made the group of 10 look the slowest.
        for (round, size) in ([sizes[0]] + sizes).enumerated() {
            var group = InProcessEngine(source: "groups")
            let members = (0..<size).map { "u\($0)" }
            let reading = (1...readers).map { members[$0 * (size - 1) / readers] }
            group.apply(.conversationUpserted(conversation: "g", kind: .group, members: members))
            // Each member's join published its read state once; the row counts the reads'.
            group.readStates = 0
            var readTime: Duration = .zero
            for m in 0..<messages {
                group.apply(.messageSent(conversation: "g", message: "m\(m)", sender: members[0], isSystem: false))
                let started = ContinuousClock.now
                for reader in reading { group.apply(.read(conversation: "g", user: reader, message: "m\(m)")) }
                readTime += ContinuousClock.now - started
            }
            readsPerSecond[size] = Double(messages * readers) / Self.seconds(readTime)
            let readStatesPerRead = Double(group.readStates) / Double(messages * readers)
            stateBytes[size] = group.engine.encodedState().count
            let last = "m\(messages - 1)"
            // Half the group reads the last message, so that its sheet has readers to page through.
            for reader in members.dropFirst().enumerated().filter({ $0.offset % 2 == 0 }).map(\.element) {
                group.apply(.read(conversation: "g", user: reader, message: last))
            }
            let firstPage = ReadDetailPage(size: Self.pageSize, after: nil)
            let middle = group.engine.readDetail(conversation: "g", message: last)?.read.dropFirst(size / 4).first
            let middlePage = ReadDetailPage(
                size: Self.pageSize,
                after: middle.map {
                    ReadDetailCursor(state: .read, readAt: $0.readAt?.milliseconds ?? 0, user: $0.user)
                        .token(conversation: "g", message: last)
                }
            )
            let wholeTimes = Self.p99Microseconds(rounds: smoke ? 6 : 60) {
                _ = group.engine.readDetail(conversation: "g", message: last)
            }
            let pageTimes = Self.p99Microseconds(rounds: smoke ? 6 : 60) {
                _ = try? group.engine.readDetail(conversation: "g", message: last, page: firstPage)
                _ = try? group.engine.readDetail(conversation: "g", message: last, page: middlePage)
            }
            let status = group.engine.status(conversation: "g", message: last)
            if round == 0 { continue }
            table.add(
                "group of \(Self.count(size)): reads applied (\(readers) readers, each read advances one message)",
                ours: ResultTable.rate(readsPerSecond[size] ?? 0, "reads/s"),
                baseline: ResultTable.rate(readsPerSecond[10] ?? 0, "reads/s") + " (group of 10)",
                ratio: ResultTable.ratio(readsPerSecond[size] ?? 0, readsPerSecond[10] ?? 1),
                target: "flat"
            )
            let marginal =
                size == 10
                ? "—"
                : String(
                    format: "%.0f B per added member",
                    Double((stateBytes[size] ?? 0) - (stateBytes[10] ?? 0)) / Double(size - 10)
                )
            table.add(
                "group of \(Self.count(size)): encoded state; read-state updates per read",
                ours: marginal + "; " + String(format: "%.2f", readStatesPerRead),
                baseline: "—",
                target: "≤ 64 B; 1"
            )
            table.add(
                "group of \(Self.count(size)): \"Read By\": two pages of \(Self.pageSize) (first, middle), p99 of both",
                ours: ResultTable.microseconds(pageTimes),
                baseline: ResultTable.microseconds(wholeTimes) + " whole sheet, read by \(status?.readCount ?? 0) of "
                    + "\(status?.recipientCount ?? 0)",
                ratio: ResultTable.ratio(pageTimes, wholeTimes),
                target: "—"
            )
        }
        table.note(
            "Group rows: one ReceiptEngine in this process, no log and no sockets; \(messages) messages per size, "
                + "and after each the same \(readers) members, spread over the group, read it: every read advances its "
                + "reader by one message, and the clock covers the reads only. Encoded state: the snapshot's growth "
                + "per member beyond the group of 10 (member records and their receipts). \"Read By\" lists every "
                + "member that received the message; then every other member reads the last message and its sheet "
                + "is asked for whole and as pages of \(Self.pageSize) (the first, and the page after the first "
                + "size/4 readers, about the middle), p99 of 60 rounds after 10 warm-up rounds; a page is cut from the whole sorted sheet, so it "
                + "costs as much as the sheet. Read-state updates per read: the ApplyResult.readStates the reads "
                + "produced (what receiptd publishes on the readers' topics), per read: one, whatever the group's size."
        )
    }

    /// Lines per page in the group rows' "Read By" pages.
    private static let pageSize = 50

    /// The p99 of `body`'s run time in microseconds over `rounds` after 10 warm-up rounds
    /// (all of them counted when there are fewer).
    static func p99Microseconds(rounds: Int, _ body: () -> Void) -> Double {
        var times: [Double] = []
        for round in 0..<(rounds + (rounds >= 20 ? 10 : 0)) {
            let started = ContinuousClock.now
            body()
            if round >= 10 || rounds < 20 { times.append(seconds(ContinuousClock.now - started) * 1e6) }
        }
        return ResultTable.percentile(times, 99)
    }

    /// Batched durable ingest (the batched ingest row's frames) with read-state updates and no
    /// subscriber of a user topic, with a subscriber of every user's topic ("u:"), and with
    /// `--no-read-state-updates`, interleaved in one run: what the per-user topics cost the hot
    /// path when no device is online, and when every user's is.
    mutating func readStateCost() throws {
        let batched = frames(2_000_000, smoke: 20_000, batchSize: 1000)
        let options = DriveOptions(acknowledged: true, window: 4)
        var drained: [Int] = []
        let rates = try interleavedMedians(count: 3) { index in
            switch index {
            case 0:
                return try drive(batched, options).eventsPerSecond
            case 1:
                var drain: TopicDrain?
                let result = try drive(batched, options) { daemon in
                    drain = try TopicDrain(
                        context: context,
                        endpoint: daemon.publishEndpoint,
                        prefixes: [Partitioning.userTopicPrefix]
                    )
                }
                drained.append(drain?.finish() ?? 0)
                return result.eventsPerSecond
            default:
                return try drive(batched, options, arguments: ["--no-read-state-updates"]).eventsPerSecond
            }
        }
        table.add(
            "durable ingest, batched (1000 events/frame), read-state updates on, no user topic followed",
            ours: ResultTable.rate(rates[0]),
            baseline: ResultTable.rate(rates[2]) + " with --no-read-state-updates",
            ratio: ResultTable.ratio(rates[0], rates[2]),
            target: "within noise"
        )
        table.add(
            "durable ingest, batched (1000 events/frame), every user's topic followed (a SUB on \"u:\")",
            ours: ResultTable.rate(rates[1]),
            baseline: ResultTable.rate(rates[2]) + " with --no-read-state-updates",
            ratio: ResultTable.ratio(rates[1], rates[2]),
            target: "—"
        )
        table.note(
            "Read-state rows: the batched ingest row's frames (reads are about 45% of the events), each "
                + "variant in turn, \(repeats) rounds, medians. receiptd publishes a user's read state only while "
                + "some subscriber follows that user's topic (its XPUB tells it); with a SUB on \"u:\" every read "
                + "is published: \(ResultTable.median(drained.map(Double.init)).formatted(.number.precision(.fractionLength(0)))) "
                + "read-state updates received per run (median)."
        )
    }

    /// A read on one device to the read state on another (issue 30, seed 001 asks for under 100
    /// ms): ``DeviceSyncProbe``'s rounds on an idle worker, and beside a steady load of 20-event
    /// frames at 50k events/s; p50 and p99 of the rounds of all `repeats` runs.
    mutating func deviceSync() throws {
        let seconds = smoke ? 0.5 : 10 * scale
        var idle: [Double] = []
        var loaded: [Double] = []
        for _ in 0..<repeats {
            let daemon = try daemon()
            let probe = try DeviceSyncProbe(
                context: context,
                ingestEndpoint: daemon.ingestEndpoint,
                publishEndpoint: daemon.publishEndpoint
            )
            usleep(UInt32(seconds * 1e6))
            idle += try probe.finish()
            daemon.terminate()
            var loadedProbe: DeviceSyncProbe?
            let set = FrameSet.make(shape: shape, events: Int(50_000 * seconds), batchSize: 20, trackUpdates: false)
            _ = try drive(
                set,
                DriveOptions(acknowledged: true, eventsPerSecond: 50_000, window: 64),
                during: { daemon in
                    loadedProbe = try DeviceSyncProbe(
                        context: context,
                        ingestEndpoint: daemon.ingestEndpoint,
                        publishEndpoint: daemon.publishEndpoint
                    )
                },
                afterLoad: { loaded += try loadedProbe?.finish() ?? [] }
            )
        }
        func cell(_ latencies: [Double]) -> String {
            guard !latencies.isEmpty else { return "no rounds" }
            return [50, 99].map { ResultTable.microseconds(ResultTable.percentile(latencies, $0)) }
                .joined(separator: " / ")
        }
        table.add(
            "device sync: a read on one device to its read state on another, at 50k events/s (p50 / p99)",
            ours: cell(loaded) + " (\(loaded.count) reads)",
            baseline: cell(idle) + " idle (\(idle.count) reads)",
            target: "p99 < 100 ms"
        )
    }

    /// A duration in seconds.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
