extension BenchRun {
    /// What CurveZMQ costs: batched and one-event-per-frame acknowledged ingest with CURVE on,
    /// beside the same workload with CURVE off, in this run.
    mutating func curveCost() throws {
        let rows: [(String, FrameSet, Int)] = [
            (
                "durable ingest, batched (1000 events/frame), CURVE on",
                frames(2_000_000, smoke: 20_000, batchSize: 1000), 4
            ),
            ("ingest, one event per frame, acknowledged (256 in flight), CURVE on", singleEventFrames(), 256),
        ]
        for (name, set, window) in rows {
            let options = DriveOptions(acknowledged: true, window: window)
            let (plain, curve) = try interleavedMedians(
                { try drive(set, options).eventsPerSecond },
                { try drive(set, options, curve: true).eventsPerSecond }
            )
            table.add(
                name,
                ours: ResultTable.rate(curve),
                baseline: ResultTable.rate(plain) + " (CURVE off)",
                ratio: ResultTable.ratio(curve, plain),
                target: "—"
            )
        }
        table.note(
            "CURVE rows: receiptd with --curve-secret-key-file and a one-key allowlist for every role; every gateway "
                + "DEALER a CURVE client (each message boxed and unboxed with libsodium's crypto_box on both sides). "
                + "Baseline: the same frames, CURVE off, in this run; the two modes interleaved run by run, "
                + "medians of \(repeats) each."
        )
    }
}
