/// How one engine instance is placed and bounded.
///
/// The engine is one worker's share of the conversations (SPEC §7): it rejects events for
/// conversations another worker owns, and it bounds the receipts it holds for messages that
/// have not arrived yet so that a misbehaving gateway cannot grow memory without limit.
public struct EngineConfiguration: Sendable, Hashable {
    /// This worker's ordinal (a StatefulSet's pod ordinal), from 0.
    public var workerIndex: Int
    /// How many workers share the conversations.
    public var workerCount: Int
    /// Receipts held for not-yet-arrived messages, across the whole engine; more are rejected `.pendingFull`.
    public var pendingReceiptLimit: Int
    /// Milliseconds a held receipt waits for its message before it is dropped and counted.
    public var pendingReceiptLifetime: Int64
    /// Per-source anti-replay window: how many sequence numbers below the highest seen are remembered.
    public var duplicateWindow: UInt64

    /// Creates a configuration; every parameter has the single-worker default.
    ///
    /// - Parameters:
    ///   - workerIndex: This worker's ordinal, from 0.
    ///   - workerCount: How many workers share the conversations (at least 1).
    ///   - pendingReceiptLimit: Bound on held receipts, whole engine.
    ///   - pendingReceiptLifetime: Milliseconds a held receipt waits.
    ///   - duplicateWindow: Per-source anti-replay window in sequence numbers (rounded up to 64).
    public init(
        workerIndex: Int = 0,
        workerCount: Int = 1,
        pendingReceiptLimit: Int = 100_000,
        pendingReceiptLifetime: Int64 = 60_000,
        duplicateWindow: UInt64 = 4096
    ) {
        self.workerIndex = workerIndex
        self.workerCount = workerCount
        self.pendingReceiptLimit = pendingReceiptLimit
        self.pendingReceiptLifetime = pendingReceiptLifetime
        self.duplicateWindow = duplicateWindow
    }
}
