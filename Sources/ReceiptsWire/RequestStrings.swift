/// Reads the string fields of one request (an event of an ingest batch, or a query) out of
/// protobuf-c, which does not check that their bytes are UTF-8.
///
/// Ids are compared byte for byte: repairing bad bytes with U+FFFD would make different ids one
/// ("nx-\xff" and "nx-\xfe" both "nx-\u{FFFD}"), merging conversations, or answering an event
/// never seen DUPLICATE. So a field that is not UTF-8 refuses the request, naming where it is.
/// Validating costs what repairing did: one pass over bytes that are copied anyway.
struct RequestStrings {
    /// The request the strings belong to, as a refusal names it.
    enum Request: CustomStringConvertible {
        /// The event at this index of an ingest batch.
        case event(Int)
        /// A query.
        case query

        var description: String {
            switch self {
            case .event(let index): "event \(index)"
            case .query: "query"
            }
        }
    }

    /// The request the strings belong to.
    let request: Request
    /// What to do with bytes that are not UTF-8.
    let invalidUTF8: EventBatchCodec.InvalidUTF8

    /// The string of a field; NULL (never set) reads as "".
    /// - Parameters:
    ///   - pointer: The field's NUL-terminated bytes, as protobuf-c unpacked them.
    ///   - field: The field's protobuf name, for the refusal.
    /// - Throws: `WireError` `.invalidField` naming the request and the field when the bytes are
    ///   not UTF-8 (unless repairing).
    @inline(__always)
    func string(_ pointer: UnsafePointer<CChar>?, _ field: StaticString) throws(WireError) -> String {
        guard let pointer else { return "" }
        if let string = String(validatingCString: pointer) { return string }
        return try repaired(pointer, field: "\(field)")
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
            if let string = String(validatingCString: pointer) {
                strings.append(string)
            } else {
                // The name is built only for the string that is refused: this runs for every member.
                strings.append(try repaired(pointer, field: "\(field)[\(index)]"))
            }
        }
        return strings
    }

    /// The string with its bad bytes replaced by U+FFFD, when repairing; else the refusal.
    private func repaired(_ pointer: UnsafePointer<CChar>, field: String) throws(WireError) -> String {
        guard case .repair = invalidUTF8 else {
            throw WireError(code: .invalidField, message: "\(request): \(field) is not valid UTF-8")
        }
        return String(cString: pointer)
    }
}
