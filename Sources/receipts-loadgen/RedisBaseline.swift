import Foundation
import ReceiptsCore
import ReceiptsWire

/// The same workload applied to Redis 7: one `FCALL receipt_event` per event (the receipt
/// logic in a Redis function, Benchmarks/redis/receipts.lua), pipelined a frame's worth of
/// events at a time on one connection per gateway, `appendfsync always`, a PUBLISH per
/// status change.
enum RedisBaseline {
    /// What the run measured.
    struct Result {
        var eventsPerSecond: Double
        var accepted = 0
        var duplicates = 0
        var rejected = 0
        var usedMemoryBytes = 0
    }

    static func measure(_ set: FrameSet, gateways: Int, executable: String, script: String) throws -> Result {
        let library = try String(contentsOfFile: script, encoding: .utf8)
        let server = try RedisServer(executable: executable)
        defer { server.stop() }
        let connections = try (0..<gateways).map { _ in try RESPConnection(port: server.port) }
        if case .error(let message) = try connections[0].command(["FUNCTION", "LOAD", "REPLACE", library]) {
            throw LoadgenError(.protocolViolation, "FUNCTION LOAD failed: \(message)")
        }
        let setup = try commands(set.setup)
        let measured = try commands(set.frames)
        var ignored = Result(eventsPerSecond: 0)
        _ = try play(setup, connections: connections, result: &ignored)
        var result = Result(eventsPerSecond: 0)
        let seconds = try play(measured, connections: connections, result: &result)
        result.eventsPerSecond = Double(set.eventCount) / seconds
        if case .bulk(let info)? = try? connections[0].command(["INFO", "memory"]), let info {
            let text = String(decoding: info, as: UTF8.self)
            for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("used_memory:") {
                result.usedMemoryBytes = Int(line.dropFirst("used_memory:".count)) ?? 0
            }
        }
        return result
    }

    /// Each frame's events as FCALL argument lists, with the frame's gateway.
    private static func commands(_ frames: [Frame]) throws -> [(gateway: Int, commands: [[String]])] {
        try frames.map { frame in
            (frame.gateway, try EventBatchCodec.decode(frame.bytes).map(arguments))
        }
    }

    private static func arguments(_ event: Event) -> [String] {
        let head = ["FCALL", "receipt_event", "0"]
        let id = [event.id.source, String(event.id.sequence)]
        switch event.kind {
        case .conversationUpserted(let conversation, let kind, let members):
            return head + ["upsert"] + id + [conversation, kind == .direct ? "direct" : "group", ""] + members
        case .messageSent(let conversation, let message, let sender, _, _, _):
            return head + ["sent"] + id + [conversation, message, sender]
        case .delivered(let conversation, let user, let message, _):
            return head + ["delivered"] + id + [conversation, message, user]
        case .read(let conversation, let user, let message, _):
            return head + ["read"] + id + [conversation, message ?? "", user]
        default:
            return head + ["unknown"] + id + [event.kind.conversation ?? ""]
        }
    }

    /// Pipelines the commands, at most two frames in flight per connection.
    /// - Returns: Seconds from the first write to the last reply.
    private static func play(
        _ frames: [(gateway: Int, commands: [[String]])],
        connections: [RESPConnection],
        result: inout Result
    ) throws -> Double {
        var inFlight = Array(repeating: [Int](), count: connections.count)
        func collect(_ gateway: Int) throws {
            let count = inFlight[gateway].removeFirst()
            for _ in 0..<count {
                switch try connections[gateway].reply() {
                case .integer(1): result.accepted += 1
                case .integer(2): result.duplicates += 1
                case .error(let message): throw LoadgenError(.protocolViolation, "redis: \(message)")
                default: result.rejected += 1
                }
            }
        }
        let start = Monotonic.now()
        for (gateway, commands) in frames {
            if inFlight[gateway].count >= 2 { try collect(gateway) }
            for command in commands { connections[gateway].append(command) }
            try connections[gateway].flush()
            inFlight[gateway].append(commands.count)
        }
        for gateway in connections.indices {
            while !inFlight[gateway].isEmpty { try collect(gateway) }
        }
        return Monotonic.seconds(from: start, to: Monotonic.now())
    }
}
