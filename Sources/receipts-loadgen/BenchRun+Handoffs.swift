import Foundation
import ReceiptsTestKit

extension BenchRun {
    /// Hand-offs per acknowledged frame (issue 32): receiptd's context switches (a voluntary one
    /// is a thread going to sleep, to be woken by another) and read/write-family system calls
    /// over the measured frames, in total and per thread, at 20 and at 1,000 events per frame,
    /// unreplicated and with `--replication-ack standby` (the primary's and the standby's): the
    /// run with the median count of the primary's voluntary switches of `repeats`.
    mutating func handoffs() throws {
        for replicated in [false, true] {
            for batch in [20, 1000] {
                let set = frames(batch == 20 ? 200_000 : 1_000_000, smoke: 4_000, batchSize: batch)
                let runs = try (0..<repeats).map { _ in try handoffRun(set, replicated: replicated) }
                let run = Self.medianRun(runs) { Double($0.processes[0].total.voluntarySwitches) }
                let frames = Double(max(set.frames.count, 1))
                let setting = replicated ? "replicated, --replication-ack standby" : "unreplicated"
                for (index, activity) in run.processes.enumerated() {
                    let process = replicated ? (index == 0 ? "primary" : "standby") : "receiptd"
                    let total = activity.total
                    table.add(
                        "hand-offs per acknowledged frame, \(batch) events/frame, \(setting): \(process)",
                        ours: String(
                            format: "%.2f voluntary + %.2f involuntary switches, %.2f read/write syscalls",
                            Double(total.voluntarySwitches) / frames,
                            Double(total.involuntarySwitches) / frames,
                            Double(total.syscalls) / frames
                        ),
                        baseline: ResultTable.rate(run.result.eventsPerSecond),
                        ratio: "—",
                        target: "fewer"
                    )
                    let busiest = activity.threads.sorted { $0.value.voluntarySwitches > $1.value.voluntarySwitches }
                    table.note(
                        "Hand-offs at \(batch) events/frame, \(setting), \(process), per frame by thread (voluntary "
                            + "/ involuntary switches, read/write syscalls): "
                            + busiest.prefix(6).map { name, counts in
                                String(
                                    format: "%@ %.2f / %.2f, %.2f",
                                    name,
                                    Double(counts.voluntarySwitches) / frames,
                                    Double(counts.involuntarySwitches) / frames,
                                    Double(counts.syscalls) / frames
                                )
                            }.joined(separator: "; ")
                    )
                }
            }
        }
        table.note(
            "Hand-offs: /proc/<pid>/task/*/status (voluntary_ctxt_switches, nonvoluntary_ctxt_switches) and io "
                + "(syscr + syscw: read, write, eventfd and file I/O, not socket recv/send nor fdatasync) of "
                + "receiptd, over the measured frames only, divided by their count, in the run with the median "
                + "voluntary switches of \(repeats); the baseline column is that run's throughput. A voluntary "
                + "switch is a thread going to sleep: to wait for work (another thread wakes it) or for the "
                + "disk (an fdatasync)."
        )
    }

    /// One drive of `set` with 16 acknowledged frames in flight per gateway, into a fresh receiptd
    /// or a fresh replicated ordinal's primary, and what each receiptd's threads did meanwhile.
    private func handoffRun(
        _ set: FrameSet,
        replicated: Bool
    ) throws -> (result: DriveResult, processes: [ThreadActivity]) {
        let options = DriveOptions(acknowledged: true, window: 16)
        var pids: [Int32] = []
        var before: [ThreadActivity] = []
        let startMeasuring = { before = pids.map(ThreadActivity.sample) }
        let result: DriveResult
        if replicated {
            let ordinal = try replicatedOrdinal(ack: "standby")
            defer { for member in ordinal.members { member.terminate() } }
            pids = ordinal.members.map(\.processIdentifier)
            result = try LoadDriver(context: context, daemon: ordinal.members[0]).drive(
                set,
                gateways: shape.gateways,
                conversations: shape.conversations,
                options: options,
                beforeMeasuring: startMeasuring
            )
            return (result, zip(pids, before).map { ThreadActivity.sample($0).since($1) })
        }
        var during: [ThreadActivity] = []
        result = try drive(
            set,
            options,
            during: { pids = [$0.processIdentifier] },
            beforeMeasuring: startMeasuring,
            afterLoad: { during = zip(pids, before).map { ThreadActivity.sample($0).since($1) } }
        )
        return (result, during)
    }
}
