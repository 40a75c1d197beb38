import Benchmark
import ReceiptsCore
import ReceiptsWire

/// `ReceiptEngine.apply`: the per-event cost inside receiptd's loop, without sockets or log, alone
/// and behind the decode of its frame.
func engineBenchmarks() {
    for (name, members) in [("direct", 2), ("group-of-10", 10)] {
        Benchmark(
            "Engine.apply.\(name).sent-delivered-read",
            configuration: .checked(scalingFactor: .kilo)
        ) { benchmark in
            var script = EventScript(conversations: 10_000, members: members)
            var engine = script.engine()
            let events = script.receipts(count: benchmark.scaledIterations.count)
            benchmark.startMeasurement()
            for event in events {
                blackHole(engine.apply(event, at: EventScript.now))
            }
            benchmark.stopMeasurement()
        }
    }

    Benchmark("Engine.apply.duplicate-event-id", configuration: .checked(scalingFactor: .kilo)) { benchmark in
        var script = EventScript(conversations: 1_000, members: 2)
        var engine = script.engine()
        let events = script.receipts(count: 1_000)
        for event in events { _ = engine.apply(event, at: EventScript.now) }
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            blackHole(engine.apply(events[index % events.count], at: EventScript.now))
        }
        benchmark.stopMeasurement()
    }

    // receiptd's apply path per frame: decode (protobuf-c into Swift values), then apply each
    // event, on a warm engine; ten frames a sample, each frame new to the engine.
    Benchmark(
        "ApplyPath.decode+apply.10-frames-of-1000-events.group-of-10",
        configuration: .checked(iterations: 20)
    ) { benchmark in
        var script = EventScript(conversations: 10_000, members: 10)
        var engine = script.engine()
        let frames = (0..<10).map { _ in EventBatchCodec.encode(script.receipts(count: 1000)) }
        benchmark.startMeasurement()
        for frame in frames {
            for event in (try? EventBatchCodec.decode(frame)) ?? [] {
                blackHole(engine.apply(event, at: EventScript.now))
            }
        }
        benchmark.stopMeasurement()
    }

    Benchmark("Engine.encodedState + restore (10k group conversations, 30k messages)") { benchmark in
        var script = EventScript(conversations: 10_000, members: 10)
        var engine = script.engine()
        for event in script.receipts(count: 200_000) { _ = engine.apply(event, at: EventScript.now) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let state = engine.encodedState()
            blackHole(try? ReceiptEngine(restoringFrom: state, configuration: engine.configuration))
        }
        benchmark.stopMeasurement()
    }
}
