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
    /// the group's size.) The "Read By" row times the who-read-it query of a message, which lists
    /// every member that received it (it is not paged yet).
    mutating func groups() throws {
        let sizes = smoke ? [10, 100] : [10, 100, 1_000, 10_000]
        let messages = count(20_000, smoke: 500)
        let readers = 9
        var readsPerSecond: [Int: Double] = [:]
        var stateBytes: [Int: Int] = [:]
        for size in sizes {
            var engine = ReceiptEngine()
            var sequence: UInt64 = 0
            var clock: Int64 = 1_750_000_000_000
            func apply(_ kind: EventKind) {
                sequence += 1
                clock += 1
                let event = Event(id: EventID(source: "groups", sequence: sequence), kind: kind)
                _ = engine.apply(event, at: Timestamp(milliseconds: clock))
            }
            let members = (0..<size).map { "u\($0)" }
            let reading = (1...readers).map { members[$0 * (size - 1) / readers] }
            apply(.conversationUpserted(conversation: "g", kind: .group, members: members))
            var readTime: Duration = .zero
            for m in 0..<messages {
                apply(.messageSent(conversation: "g", message: "m\(m)", sender: members[0], isSystem: false))
                let started = ContinuousClock.now
                for reader in reading { apply(.read(conversation: "g", user: reader, message: "m\(m)")) }
                readTime += ContinuousClock.now - started
            }
            readsPerSecond[size] = Double(messages * readers) / Self.seconds(readTime)
            stateBytes[size] = engine.encodedState().count
            var detailTimes: [Double] = []
            for round in 0..<(smoke ? 6 : 60) {
                let started = ContinuousClock.now
                _ = engine.readDetail(conversation: "g", message: "m\(messages - 1)")
                // The first rounds warm the caches up.
                if round >= 10 || smoke { detailTimes.append(Self.seconds(ContinuousClock.now - started) * 1e6) }
            }
            detailTimes.sort()
            let status = engine.status(conversation: "g", message: "m\(messages - 1)")
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
                "group of \(Self.count(size)): encoded state; \"Read By\" of the last message, p99 of 50",
                ours: marginal + "; " + ResultTable.microseconds(detailTimes[(detailTimes.count - 1) * 99 / 100]),
                baseline: "read by \(status?.readCount ?? 0) of \(status?.recipientCount ?? 0) recipients",
                target: "—"
            )
        }
        table.note(
            "Group rows: one ReceiptEngine in this process, no log and no sockets; \(messages) messages per size, "
                + "and after each the same \(readers) members, spread over the group, read it: every read advances its "
                + "reader by one message, and the clock covers the reads only. Encoded state: the snapshot's growth "
                + "per member beyond the group of 10 (member records and their receipts). \"Read By\" lists every "
                + "member that received the message: it is not paged yet, so it grows with the group. No read-state "
                + "update is published per read yet (the per-user topic is not built)."
        )
    }

    /// A duration in seconds.
    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
