import Foundation

extension BenchRun {
    /// Resident memory of receiptd per tracked message and per (conversation, member), each
    /// from two loads that differ in that one dimension only.
    mutating func memory(messages: Int) throws {
        var messageShape = shape
        messageShape.messagesOnly = true
        messageShape.duplicateFraction = 0
        let set = FrameSet.make(shape: messageShape, events: messages, batchSize: 1000, trackUpdates: false)
        let daemon = try self.daemon(["--compact-bytes", "1000000000000"])
        defer { daemon.terminate() }
        let driver = LoadDriver(context: context, daemon: daemon)
        let options = DriveOptions(acknowledged: true, window: 4)
        _ = try driver.drive(
            set.slice(0..<0),
            gateways: shape.gateways,
            conversations: shape.conversations,
            options: options
        )
        let empty = settledResident(daemon)
        let half = set.frames.count / 2
        var loaded = 0
        for range in [0..<half, half..<set.frames.count] {
            let part = set.slice(range)
            _ = try driver.drive(part, gateways: shape.gateways, conversations: shape.conversations, options: options)
            loaded += part.eventCount
            let resident = settledResident(daemon)
            let perMessage = Double(resident - empty) / Double(loaded)
            table.add(
                "memory per tracked message at \(Self.count(loaded)) messages (RSS growth / messages)",
                ours: String(format: "%.0f B", perMessage),
                target: "<= 100 B"
            )
        }
        table.note(
            "Memory: VmRSS of receiptd after loading, minus VmRSS with the same \(shape.conversations) conversations "
                + "and no messages; messages only (no receipts), \(messageShape.gateways) gateways, 1000 events/frame. "
                + "RSS includes allocator slack and array growth headroom, so it is an upper bound on the state's size."
        )

        let conversations = smoke ? 2_000 : count(200_000, smoke: 2_000)
        var direct = shape
        direct.conversations = conversations
        direct.directFraction = 1
        var groups = direct
        groups.directFraction = 0
        groups.groupSizes = 12...12
        var residents: [(members: Int, bytes: Int)] = []
        for variant in [direct, groups] {
            let setup = FrameSet.make(shape: variant, events: 0, batchSize: 1000, trackUpdates: false)
            let daemon = try self.daemon()
            defer { daemon.terminate() }
            let baseline = settledResident(daemon)
            _ = try LoadDriver(context: context, daemon: daemon).drive(
                setup,
                gateways: variant.gateways,
                conversations: variant.conversations,
                options: options
            )
            residents.append((setup.memberCount, settledResident(daemon) - baseline))
        }
        let perMember =
            Double(residents[1].bytes - residents[0].bytes) / Double(residents[1].members - residents[0].members)
        table.add(
            "memory per (conversation, member): \(Self.count(conversations)) conversations of 12 vs of 2 members",
            ours: String(format: "%.0f B", perMember),
            target: "<= 64 B"
        )
    }

    /// VmRSS once it has stopped moving (the writer thread may still be releasing buffers).
    private func settledResident(_ daemon: DaemonProcess) -> Int {
        var last = daemon.residentBytes()
        for _ in 0..<20 {
            usleep(100_000)
            let now = daemon.residentBytes()
            if now == last { return now }
            last = now
        }
        return last
    }

    static func count(_ value: Int) -> String {
        if value >= 1_000_000, value % 100_000 == 0 { return String(format: "%gM", Double(value) / 1e6) }
        if value >= 1_000, value % 100 == 0 { return String(format: "%gk", Double(value) / 1e3) }
        return "\(value)"
    }
}
