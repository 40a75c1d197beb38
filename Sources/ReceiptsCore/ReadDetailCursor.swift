import Foundation

/// A place in the "Read by" sheet's one order (readers, most recent read first; then
/// delivered; then not delivered; ties by user id): the last line of a page. The next page
/// starts after it, so lines that move meanwhile are neither skipped twice nor shown twice
/// where they stand still.
///
/// On the wire a cursor is an opaque token bound to its message: base64url of a version byte,
/// the place and a check over the conversation id, the message id and the place. A token cut
/// short, written twice, made up or taken from another message or conversation decodes to
/// nothing, so the query endpoint refuses it as the proto says (`INVALID_ARGUMENT`) instead of
/// answering a page from somewhere else.
public struct ReadDetailCursor: Hashable, Sendable, Comparable {
    /// The list of the line.
    public var state: RecipientState
    /// Its read time in milliseconds (read lines; 0 for the others).
    public var readAt: Int64
    /// Its user.
    public var user: String

    public init(state: RecipientState, readAt: Int64, user: String) {
        self.state = state
        self.readAt = readAt
        self.user = user
    }

    /// The sheet's order: list, then the most recent read first, then user id.
    public static func < (a: ReadDetailCursor, b: ReadDetailCursor) -> Bool {
        (a.state.rawValue, b.readAt, a.user) < (b.state.rawValue, a.readAt, b.user)
    }

    /// A string that is not a `nextCursor` of the sheet it was offered to.
    public struct NotACursor: Error, Hashable {
        /// The string offered.
        public var token: String
    }

    /// The token's layout version (its first byte).
    private static let version: UInt8 = 1
    /// Version, state and read time come before the user id; the check follows it.
    private static let headerSize = 10
    private static let checkSize = 8

    /// The cursor as the wire's opaque token for one message's sheet.
    ///
    /// - Parameters:
    ///   - conversation: The conversation id.
    ///   - message: The message id.
    /// - Returns: The token (base64url, no padding).
    public func token(conversation: String, message: String) -> String {
        var bytes: [UInt8] = [Self.version, state.rawValue]
        withUnsafeBytes(of: UInt64(bitPattern: readAt).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: user.utf8)
        let check = Self.check(bytes, conversation: conversation, message: message)
        withUnsafeBytes(of: check.bigEndian) { bytes.append(contentsOf: $0) }
        return Self.base64URL(bytes)
    }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The cursor of a token that `token(conversation:message:)` made for this message, or nil
    /// for any other string.
    ///
    /// - Parameters:
    ///   - token: A `next_cursor` from an earlier reply.
    ///   - conversation: The conversation id the query names.
    ///   - message: The message id the query names.
    public init?(token: String, conversation: String, message: String) {
        let standard = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let padded = standard + String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: padded) else { return nil }
        let bytes = [UInt8](data)
        // Only the one spelling `token(conversation:message:)` makes: no "+", "/" or "=", no
        // stray low bits in the last character.
        guard Self.base64URL(bytes) == token, bytes.count > Self.headerSize + Self.checkSize, bytes[0] == Self.version,
            let state = RecipientState(rawValue: bytes[1])
        else { return nil }
        let body = Array(bytes[..<(bytes.count - Self.checkSize)])
        let check = bytes[(bytes.count - Self.checkSize)...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard check == Self.check(body, conversation: conversation, message: message),
            let user = String(validating: body[Self.headerSize...], as: UTF8.self)
        else { return nil }
        let readAt = body[2..<Self.headerSize].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self.init(state: state, readAt: Int64(bitPattern: readAt), user: user)
    }

    /// FNV-1a 64 over the conversation id, a 0, the message id, a 0 and the cursor's bytes, then
    /// MurmurHash3's finalizer: a token made for one message fails the check of any other.
    private static func check(_ body: [UInt8], conversation: String, message: String) -> UInt64 {
        Partitioning.finalized(Partitioning.fnv1a(Array(conversation.utf8) + [0] + Array(message.utf8) + [0] + body))
    }
}
