/// A frame that cannot be turned into values.
///
/// A struct with an extensible `Code` (not an enum) so that codes can be added without
/// breaking callers' exhaustive switches. protobuf-c reports no detail about why a body is
/// invalid, so there is no underlying cause to carry; `message` says what was being decoded.
public struct WireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem the frame has.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: Hashable, Sendable {
            case malformedFrame
            case frameTooLarge
            case unknownKind
            case invalidField
            case wrongFrameCount
            case idTooLong
        }

        private var wrapped: Wrapped

        private init(_ wrapped: Wrapped) {
            self.wrapped = wrapped
        }

        /// The bytes are not a valid protobuf body of the expected message type.
        public static let malformedFrame = Code(.malformedFrame)
        /// The frame exceeds the configured maximum size (checked by the caller before decoding).
        public static let frameTooLarge = Code(.frameTooLarge)
        /// A query with none of the kinds this build knows (e.g. from a newer client).
        public static let unknownKind = Code(.unknownKind)
        /// A well-formed body holds a value this build cannot represent and has no safe
        /// default for, e.g. an event outcome number from a newer server, or a request's
        /// string that is not UTF-8 or holds a NUL (answer ERROR_CODE_INVALID_ARGUMENT).
        public static let invalidField = Code(.invalidField)
        /// A message did not come with the number of frames its kind has (a replication
        /// message's records or snapshot chunk without their second frame, ...).
        public static let wrongFrameCount = Code(.wrongFrameCount)
        /// A request's id is longer than the decoder was told to allow (a gateway limit:
        /// answer ERROR_CODE_INVALID_ARGUMENT).
        public static let idTooLong = Code(.idTooLong)

        public var description: String {
            switch wrapped {
            case .malformedFrame: "malformed frame"
            case .frameTooLarge: "frame too large"
            case .unknownKind: "unknown kind"
            case .invalidField: "invalid field"
            case .wrongFrameCount: "wrong frame count"
            case .idTooLong: "id too long"
            }
        }
    }

    /// What kind of problem the frame has.
    public var code: Code
    /// What exactly was wrong, for logs and error replies.
    public var message: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: What kind of problem the frame has.
    ///   - message: What exactly was wrong.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String {
        "\(code): \(message)"
    }
}
