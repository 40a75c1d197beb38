import Foundation

extension BenchRun {
    /// The same workload on Redis 7 (function, pipelined, appendfsync always) beside receiptd.
    mutating func redis(script: String) throws {
        let label = "same workload on Redis 7 (FCALL per event, pipelined 1000, appendfsync always)"
        guard let executable = RedisServer.executable else {
            table.add(label, ours: "—", baseline: "skipped (redis-server not installed)")
            return
        }
        let set = FrameSet.make(
            shape: shape,
            events: count(300_000, smoke: 5_000),
            batchSize: 1000,
            trackUpdates: false
        )
        var memory = 0
        let redis = try median {
            let result = try RedisBaseline.measure(
                set,
                gateways: shape.gateways,
                executable: executable,
                script: script
            )
            if result.rejected > 0 {
                FileHandle.standardError.write(Data("warning: redis rejected \(result.rejected) events\n".utf8))
            }
            memory = result.usedMemoryBytes
            return result.eventsPerSecond
        }
        let ours = try median { try drive(set, DriveOptions(acknowledged: true, window: 4)).eventsPerSecond }
        table.add(
            label,
            ours: ResultTable.rate(ours),
            baseline: ResultTable.rate(redis),
            ratio: ResultTable.ratio(ours, redis),
            target: ">= 10x"
        )
        table.note(
            "Redis baseline: redis-server \(Self.redisVersion(executable)) started by the harness on 127.0.0.1 (random "
                + "port, temp dir, --appendonly yes --appendfsync always, no RDB). Same events as receiptd's batched "
                + "row (\(set.eventCount) events, \(shape.gateways) connections, one per gateway); the receipt rules "
                + "for this workload's kinds are a Lua function (Benchmarks/redis/receipts.lua): dedup by event id, "
                + "up-to watermarks, recipient counts, status, PUBLISH per change. Differences: RESP over TCP "
                + "instead of protobuf over ipc, one FCALL per event instead of one frame per 1000, updates as text, "
                + "Redis's data model (hashes) instead of receiptd's packed arrays; Redis used "
                + "\(ResultTable.bytes(Double(memory))) for this state."
        )
    }

    private static func redisVersion(_ executable: String) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--version"]
        let pipe = Pipe()
        process.standardOutput = pipe
        guard (try? process.run()) != nil else { return "" }
        process.waitUntilExit()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return text.split(separator: " ").first { $0.hasPrefix("v=") }.map { String($0.dropFirst(2)) } ?? ""
    }
}
