/// Why a step of a worker count change was refused (deploy/SCALING.md).
public struct MoveError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of refusal; new codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case staleEpoch = "stale_epoch"
            case wrongCount = "wrong_count"
            case noMove = "no_move"
            case moveUnderWay = "move_under_way"
            case conflict
            case invalidState = "invalid_state"
        }
        private let value: Value

        /// The epoch is older than (or, with other counts, equal to) one this worker recorded.
        public static let staleEpoch = Code(value: .staleEpoch)
        /// The move starts from a worker count other than this worker's.
        public static let wrongCount = Code(value: .wrongCount)
        /// No move is under way under that epoch.
        public static let noMove = Code(value: .noMove)
        /// Another move is not finished.
        public static let moveUnderWay = Code(value: .moveUnderWay)
        /// A conversation does not move where the step says, is held here from elsewhere, or
        /// does not fit (the user table is full).
        public static let conflict = Code(value: .conflict)
        /// Exported state that cannot be read.
        public static let invalidState = Code(value: .invalidState)

        public var description: String { value.rawValue }
    }

    /// What kind of refusal.
    public var code: Code
    /// What exactly, for the operator.
    public var message: String

    /// Creates a refusal.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
