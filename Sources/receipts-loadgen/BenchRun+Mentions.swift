extension BenchRun {
    /// Durable batched ingest of the same workload with every message naming two of its
    /// recipients (one in ten also mentioning everyone), and without mentions, interleaved.
    mutating func mentionCost() throws {
        var mentioning = shape
        mentioning.mentionedPerMessage = 2
        try addWorkloadComparison(
            mentioning,
            "durable ingest, batched, every message naming 2 recipients (1 in 10 also @everyone)",
            without: "without mentions"
        )
        table.note(
            "Mentions: the batched workload (1000 events a frame, 4 frames in flight per gateway) with and "
                + "without mentions in its messages, \(repeats) rounds each, taking turns, medians. Nobody follows "
                + "a user topic, as in the batched row: the named users' read states are built only when one does."
        )
    }

    /// Batched durable ingest (1000 events a frame, 4 frames in flight per gateway) of `variant`
    /// beside the same workload with the run's own shape, taking turns, medians, as one row.
    mutating func addWorkloadComparison(_ variant: WorkloadShape, _ measure: String, without: String) throws {
        let events = count(1_000_000, smoke: 10_000)
        let changed = FrameSet.make(shape: variant, events: events, batchSize: 1000, trackUpdates: false)
        let plain = frames(1_000_000, smoke: 10_000, batchSize: 1000)
        let options = DriveOptions(acknowledged: true, window: 4)
        let rates = try interleavedMedians(
            { try drive(changed, options).eventsPerSecond },
            { try drive(plain, options).eventsPerSecond }
        )
        table.add(
            measure,
            ours: ResultTable.rate(rates.first),
            baseline: ResultTable.rate(rates.second) + " " + without,
            ratio: ResultTable.ratio(rates.first, rates.second),
            target: ">= 0.95x"
        )
    }
}
