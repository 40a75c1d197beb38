/// How many of the conversations an engine holds stand where in a move.
public struct MoveProgress: Hashable, Sendable {
    /// Served here.
    public var owned: Int
    /// Frozen for their export.
    public var frozen: Int
    /// Given to their new owner, kept until the move commits.
    public var released: Int
    /// Served here and imported from another worker.
    public var imported: Int
}
