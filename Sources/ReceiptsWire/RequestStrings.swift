import CProtobufC

/// Reads the string fields of one request (an event of an ingest batch, or a query) out of
/// protobuf-c, which checks neither that their bytes are UTF-8 nor that they hold no NUL.
///
/// Ids are compared byte for byte: repairing bad bytes with U+FFFD would make different ids one
/// ("nx-\xff" and "nx-\xfe" both "nx-\u{FFFD}"), merging conversations, or answering an event
/// never seen DUPLICATE; and protobuf-c hands a string over NUL-terminated, so "a\0b" and "a\0c"
/// (valid UTF-8, which a Go or Python gateway can send) would both read as "a". So a field that
/// is not UTF-8 or holds a NUL refuses the request, naming where it is. Validating costs what
/// repairing did: one pass over bytes that are copied anyway, and the NUL check compares the
/// length that pass found with the one protobuf-c allocated for (``Arena/unpackedLength(of:)``).
struct RequestStrings {
    /// The request the strings belong to, as a refusal names it.
    enum Request: CustomStringConvertible {
        /// The event at this index of an ingest batch.
        case event(Int)
        /// A query.
        case query
        /// A replication message (deploy/REPLICATION.md section 4.3), by its protobuf name.
        case replication(StaticString)

        var description: String {
            switch self {
            case .event(let index): "event \(index)"
            case .query: "query"
            case .replication(let message): "\(message)"
            }
        }
    }

    /// The request the strings belong to.
    let request: Request
    /// What to do with strings that are not UTF-8 or hold a NUL.
    let invalidUTF8: EventBatchCodec.InvalidUTF8
    /// UTF-8 bytes a string may have; a longer one refuses the request (`WireError.Code.idTooLong`).
    var maxBytes = Int.max

    /// The string of a field; NULL (never set) reads as "".
    /// - Parameters:
    ///   - pointer: The field's NUL-terminated bytes, as protobuf-c unpacked them through
    ///     ``Arena/withAllocator(_:)``.
    ///   - field: The field's protobuf name, for the refusal.
    /// - Throws: `WireError` `.invalidField` naming the request and the field when the bytes are
    ///   not UTF-8 or hold a NUL (unless repairing).
    @inline(__always)
    func string(_ pointer: UnsafePointer<CChar>?, _ field: StaticString) throws(WireError) -> String {
        guard let pointer else { return "" }
        return try read(pointer, field: "\(field)")
    }

    /// The string of an optional field: nil when it is not set (NULL, protobuf-c's static empty
    /// string) or empty. The unset case, most events' thread, costs no string at all; a set one
    /// is checked as any other.
    @inline(__always)
    func optionalString(_ pointer: UnsafePointer<CChar>?, _ field: StaticString) throws(WireError) -> String? {
        guard let pointer, pointer != receipts_protobuf_c_empty_string() else { return nil }
        let string = try read(pointer, field: "\(field)")
        return string.isEmpty ? nil : string
    }

    /// The strings of a repeated field; a bad one is named with its index (`member_ids[2]`).
    func strings(
        _ pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
        count: Int,
        _ field: StaticString
    ) throws(WireError) -> [String] {
        guard let pointers, count > 0 else { return [] }
        var strings: [String] = []
        strings.reserveCapacity(count)
        for index in 0..<count {
            guard let pointer = pointers[index] else {
                strings.append("")
                continue
            }
            // The name is built only for the string that is refused: this runs for every member.
            strings.append(try read(pointer, field: "\(field)[\(index)]"))
        }
        return strings
    }

    /// The string at `pointer`; else the refusal naming `field`. When repairing, bad bytes are
    /// replaced with U+FFFD and the string ends at its first NUL, as receiptd read every id
    /// before it refused such ones.
    @inline(__always)
    private func read(_ pointer: UnsafePointer<CChar>, field: @autoclosure () -> String) throws(WireError) -> String {
        guard let string = String(validatingCString: pointer) else {
            guard case .repair = invalidUTF8 else { throw refusal(field(), "is not valid UTF-8") }
            return String(cString: pointer)
        }
        // `utf8.count` is stored in a native string: no second pass over the bytes.
        if case .refuse = invalidUTF8, string.utf8.count != Arena.unpackedLength(of: pointer) {
            throw refusal(field(), "holds a NUL byte")
        }
        if string.utf8.count > maxBytes {
            throw WireError(
                code: .idTooLong,
                message:
                    "\(request): \(field()) is \(string.utf8.count) bytes, over the limit of \(maxBytes) bytes per id"
            )
        }
        return string
    }

    /// The refusal of the request because of `field`.
    private func refusal(_ field: String, _ reason: String) -> WireError {
        WireError(code: .invalidField, message: "\(request): \(field) \(reason)")
    }
}
