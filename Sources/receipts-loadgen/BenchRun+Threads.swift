import Foundation
import ReceiptsCore

extension BenchRun {
    /// Threads (issue 31): batched durable ingest with a third of the messages replies in a
    /// thread (their receipts then in the thread) beside the same workload without, interleaved;
    /// then, in this process, a group of 10,000 with 1,000 threads of 5 participants: what a
    /// thread costs, a thread read's cost and updates, and a reply's "Read By" pages.
    mutating func threadCost() throws {
        var threaded = shape
        threaded.replyShare = 1.0 / 3
        try addWorkloadComparison(
            threaded,
            "durable ingest, batched, a third of the messages thread replies (their receipts in the thread)",
            without: "without threads"
        )
        try bigGroupThreads()
    }

    /// A group of 10,000 members with 1,000 threads of 5 participants each, in this process.
    private mutating func bigGroupThreads() throws {
        let size = smoke ? 1_000 : 10_000
        let threadCount = smoke ? 100 : 1_000
        var threads = InProcessEngine(source: "threads")
        let members = (0..<size).map { "u\($0)" }
        threads.apply(.conversationUpserted(conversation: "g", kind: .group, members: members))
        let emptyBytes = threads.engine.encodedState().count
        let emptyResident = Self.ownResidentBytes()
        var readTime: Duration = .zero
        var threadReads = 0
        var replyUpdates = 0
        var readUpdates = 0
        for t in 0..<threadCount {
            threads.apply(.messageSent(conversation: "g", message: "t\(t)", sender: members[0], isSystem: false))
            let participants = [members[0]] + (1...4).map { members[1 + (t * 4 + $0) % (size - 1)] }
            threads.readStates = 0
            for (k, participant) in participants.dropFirst().enumerated() {
                threads.apply(
                    .messageSent(
                        conversation: "g",
                        message: "t\(t)r\(k)",
                        sender: participant,
                        isSystem: false,
                        thread: "t\(t)"
                    )
                )
            }
            replyUpdates += threads.readStates
            threads.readStates = 0
            let started = ContinuousClock.now
            for participant in participants {
                threads.apply(.read(conversation: "g", user: participant, message: nil, thread: "t\(t)"))
                threadReads += 1
            }
            readTime += ContinuousClock.now - started
            readUpdates += threads.readStates
        }
        let threadBytes = Double(threads.engine.encodedState().count - emptyBytes) / Double(threadCount)
        let threadResident = Double(Self.ownResidentBytes() - emptyResident) / Double(threadCount)
        // The same messages with no thread: what the threads add beyond their five messages.
        var flat = InProcessEngine(source: "flat")
        flat.apply(.conversationUpserted(conversation: "g", kind: .group, members: members))
        let flatEmpty = flat.engine.encodedState().count
        for m in 0..<threadCount * 5 {
            flat.apply(.messageSent(conversation: "g", message: "f\(m)", sender: members[m % 5], isSystem: false))
        }
        let flatBytes = Double(flat.engine.encodedState().count - flatEmpty) / Double(threadCount)
        table.add(
            "group of \(Self.count(size)), \(Self.count(threadCount)) threads of 5: encoded state per thread (root + 4 replies, 5 participants)",
            ours: String(format: "%.0f B (RSS growth %.0f B)", threadBytes, threadResident),
            baseline: String(format: "%.0f B for 5 messages with no thread", flatBytes),
            ratio: ResultTable.ratio(threadBytes, flatBytes),
            target: "<= 820 B (5 x 100 + 5 x 64)"
        )
        table.add(
            "group of \(Self.count(size)): thread reads applied (whole thread); updates per read; per reply",
            ours: ResultTable.rate(Double(threadReads) / max(Self.seconds(readTime), 1e-9), "reads/s")
                + String(format: "; %.2f", Double(readUpdates) / Double(max(threadReads, 1)))
                + String(format: "; %.2f", Double(replyUpdates) / Double(max(threadCount * 4, 1))),
            baseline: "—",
            target: "1 per read; the followers per reply, whatever the group's size"
        )
        // Half the group reads the last thread's last reply, so that its sheet has readers.
        let last = "t\(threadCount - 1)r3"
        for reader in members.dropFirst().enumerated().filter({ $0.offset % 2 == 0 }).map(\.element) {
            threads.apply(.read(conversation: "g", user: reader, message: last, thread: "t\(threadCount - 1)"))
        }
        let page = ReadDetailPage(size: 50, after: nil)
        let wholeTimes = Self.p99Microseconds(rounds: smoke ? 6 : 60) {
            _ = threads.engine.readDetail(conversation: "g", message: last)
        }
        let pageTimes = Self.p99Microseconds(rounds: smoke ? 6 : 60) {
            _ = try? threads.engine.readDetail(conversation: "g", message: last, page: page)
        }
        let status = threads.engine.status(conversation: "g", message: last)
        table.add(
            "group of \(Self.count(size)): a thread reply's \"Read By\": first page of 50, p99",
            ours: ResultTable.microseconds(pageTimes),
            baseline: ResultTable.microseconds(wholeTimes) + " whole sheet, read by \(status?.readCount ?? 0) of "
                + "\(status?.recipientCount ?? 0)",
            ratio: ResultTable.ratio(pageTimes, wholeTimes),
            target: "—"
        )
        table.note(
            "Threads: the batched workload with a third of its messages replies in the thread of the conversation's "
                + "previous message (their deliveries and reads then in the thread), beside it without, \(repeats) rounds "
                + "each, taking turns, medians. Then one ReceiptEngine in this process: a group of \(Self.count(size)) "
                + "members, \(Self.count(threadCount)) roots each with 4 replies from 4 other members, each thread read "
                + "whole by its 5 participants; encoded state (the snapshot's growth) per thread beside 5 messages with "
                + "no thread; RSS growth of this process, an upper bound (allocator slack); SPEC §8's budget for 5 "
                + "messages and 5 (conversation, member) slots is 820 B. Read-state updates: ApplyResult.readStates per "
                + "thread read (the reader's) and per reply (its followers but its sender: 2.5 on average for the 4 "
                + "replies of a thread whose root sender and repliers follow it). Then half the group reads "
                + "the last reply in its thread and its sheet is asked for, p99 of 60 rounds after 10 warm-up rounds."
        )
    }

    /// This process's resident memory (VmRSS), in bytes.
    private static func ownResidentBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
}
