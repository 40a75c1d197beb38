import Foundation

extension BenchRun {
    /// Hand-offs per acknowledged frame (issue 32): receiptd's context switches (a voluntary one
    /// is a thread going to sleep, to be woken by another) and read/write-family system calls
    /// over the measured frames, in total and per thread, at 20 and at 1,000 events per frame: the
    /// run with the median count of voluntary switches of `repeats`.
    mutating func handoffs() throws {
        for batch in [20, 1000] {
            let set = frames(batch == 20 ? 200_000 : 1_000_000, smoke: 4_000, batchSize: batch)
            let runs = try (0..<repeats).map { _ -> (DriveResult, ThreadActivity) in
                var pid: Int32 = 0
                var before = ThreadActivity()
                var during = ThreadActivity()
                let result = try drive(
                    set,
                    DriveOptions(acknowledged: true, window: 16),
                    during: { pid = $0.processIdentifier },
                    beforeMeasuring: { before = ThreadActivity.sample(pid) },
                    afterLoad: { during = ThreadActivity.sample(pid).since(before) }
                )
                return (result, during)
            }
            let (result, during) = Self.medianRun(runs) { Double($0.1.total.voluntarySwitches) }
            let frames = Double(max(set.frames.count, 1))
            let total = during.total
            table.add(
                "hand-offs per acknowledged frame, \(batch) events/frame, 16 in flight per gateway",
                ours: String(
                    format: "%.2f voluntary + %.2f involuntary switches, %.2f read/write syscalls",
                    Double(total.voluntarySwitches) / frames,
                    Double(total.involuntarySwitches) / frames,
                    Double(total.syscalls) / frames
                ),
                baseline: ResultTable.rate(result.eventsPerSecond),
                ratio: "—",
                target: "fewer"
            )
            let busiest = during.threads.sorted { $0.value.voluntarySwitches > $1.value.voluntarySwitches }.prefix(6)
            table.note(
                "Hand-offs at \(batch) events/frame, per frame by thread (voluntary / involuntary switches, "
                    + "read/write syscalls): "
                    + busiest.map { name, counts in
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
        table.note(
            "Hand-offs: /proc/<pid>/task/*/status (voluntary_ctxt_switches, nonvoluntary_ctxt_switches) and io "
                + "(syscr + syscw: read, write, eventfd and file I/O, not socket recv/send nor fdatasync) of "
                + "receiptd, over the measured frames only, divided by their count, in the run with the median "
                + "voluntary switches of \(repeats); the baseline column is that run's throughput. A voluntary "
                + "switch is a thread going to sleep: to wait for work (another thread wakes it) or for the "
                + "disk (an fdatasync)."
        )
    }
}
