/// Conversations exported by one worker for another in a move: their state, the users they
/// name, their held receipts and the sender's replay windows, read and checked.
public struct ExportedConversations: Sendable {
    /// The state, as a small engine of its own.
    let engine: ReceiptEngine

    /// Reads an export.
    /// - Parameter bytes: What ``ReceiptEngine/exportedState(of:)`` encoded.
    /// - Throws: `MoveError` `.invalidState` for anything but an intact export.
    public init(_ bytes: [UInt8]) throws(MoveError) {
        do {
            engine = try ReceiptEngine(restoringFrom: bytes, configuration: EngineConfiguration())
        } catch {
            throw MoveError(.invalidState, "the exported state cannot be read: \(error)")
        }
    }

    private init(engine: ReceiptEngine) {
        self.engine = engine
    }

    /// No conversations: a sender's last word to a receiver, when it has nothing more.
    public static let none = ExportedConversations(engine: ReceiptEngine())

    /// The conversations, in export order.
    public var conversationIDs: [String] { engine.conversations.map(\.id) }
}
