import Benchmark
import ReceiptsCore
import ReceiptsWire

/// The protobuf codec (protobuf-c underneath) on the frames receiptd handles per event.
func codecBenchmarks() {
    var script = EventScript(conversations: 10_000, members: 5)
    _ = script.setup()
    let events = script.receipts(count: 1000)
    let frame = EventBatchCodec.encode(events)

    Benchmark("EventBatchCodec.decode.1000-event-frame", configuration: .checked()) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? EventBatchCodec.decode(frame))
        }
    }

    Benchmark("EventBatchCodec.encode.1000-events", configuration: .checked()) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(EventBatchCodec.encode(events))
        }
    }

    let single = EventBatchCodec.encode([events[1]])
    Benchmark("EventBatchCodec.decode.one-event-frame", configuration: .checked(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? EventBatchCodec.decode(single))
        }
    }

    let status = MessageStatus(
        conversation: "c42",
        message: "m7",
        sequence: 7,
        sender: "u210",
        sentAt: EventScript.now,
        status: .readBySome,
        recipientCount: 4,
        deliveredCount: 4,
        readCount: 2,
        deliveredAt: EventScript.now,
        readAt: EventScript.now,
        isSystem: false,
        isEdited: false,
        isDeleted: false
    )
    Benchmark("StatusUpdate.encode", configuration: .checked(scalingFactor: .kilo)) { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(StatusUpdate(publisherRun: 1, sequence: UInt64(index), status: status).encode())
        }
    }

    let results = [EventOutcome](repeating: .accepted(held: false), count: 1000)
    Benchmark("IngestReply.encode.1000-results", configuration: .checked()) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(IngestReply(results: results).encode())
        }
    }

    // The reply to a one-event frame: one per event in the one-event-per-frame ingest rows.
    let one = [EventOutcome.accepted(held: false)]
    Benchmark("IngestReply.encode.one-result", configuration: .checked(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(IngestReply(results: one).encode())
        }
    }
}
