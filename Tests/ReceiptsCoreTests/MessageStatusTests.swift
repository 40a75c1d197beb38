import ReceiptsCore
import Testing

/// `MessageStatus` keeps its sender and thread root in one stored string: each reads back as
/// given, whatever the other holds, and two statuses are equal only when both are.
@Suite struct MessageStatusTests {
    /// A status with `sender` and `threadRoot` (set after the initializer, which packs them the
    /// same way).
    static func status(sender: String, threadRoot: String?) -> MessageStatus {
        var status = DisplayTextTests.status(.notDelivered)
        status.sender = sender
        status.threadRoot = threadRoot
        return status
    }

    @Test(
        arguments: [
            ("ann", nil), ("ann", "root-1"), ("", "root"), ("ann", ""), ("", nil), ("änn-ü", "rööt-✓"),
            ("a-sender-id-longer-than-fifteen-bytes", "a-root-id-longer-than-fifteen-bytes"),
        ] as [(String, String?)]
    )
    func senderAndThreadRootReadBackAsGiven(sender: String, threadRoot: String?) {
        let status = Self.status(sender: sender, threadRoot: threadRoot)
        #expect(status.sender == sender)
        #expect(status.threadRoot == threadRoot)
    }

    @Test func settingOneKeepsTheOther() {
        var status = Self.status(sender: "ann", threadRoot: "root-1")
        status.sender = "bob-ü"
        #expect(status.sender == "bob-ü" && status.threadRoot == "root-1")
        status.threadRoot = nil
        #expect(status.sender == "bob-ü" && status.threadRoot == nil)
        status.threadRoot = "root-2"
        #expect(status.sender == "bob-ü" && status.threadRoot == "root-2")
        #expect(status == Self.status(sender: "bob-ü", threadRoot: "root-2"))
    }

    @Test func equalOnlyWhenSenderAndThreadRootBothAre() {
        let pairs: [(String, String?)] = [("ab", "c"), ("a", "bc"), ("abc", nil), ("abc", ""), ("", "abc")]
        for (i, a) in pairs.enumerated() {
            for (j, b) in pairs.enumerated() {
                let equal = Self.status(sender: a.0, threadRoot: a.1) == Self.status(sender: b.0, threadRoot: b.1)
                #expect(equal == (i == j), "\(a) against \(b)")
            }
        }
        #expect(Set(pairs.map { Self.status(sender: $0.0, threadRoot: $0.1) }).count == pairs.count)
    }
}
