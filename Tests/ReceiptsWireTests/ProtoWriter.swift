/// Builds protobuf bytes by hand from the encoding rules, so tests can check the codec's
/// output byte for byte and feed it bodies no well-behaved encoder would produce.
struct ProtoWriter {
    private(set) var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// A varint field (wire type 0).
    mutating func varint(field: Int, _ value: UInt64) {
        varint(UInt64(field << 3))
        varint(value)
    }

    /// A length-delimited field (wire type 2) holding raw bytes.
    mutating func bytes(field: Int, _ value: [UInt8]) {
        varint(UInt64(field << 3 | 2))
        varint(UInt64(value.count))
        bytes += value
    }

    mutating func string(field: Int, _ value: String) {
        bytes(field: field, Array(value.utf8))
    }

    /// A length-delimited field holding a sub-message built by `build`.
    mutating func message(field: Int, _ build: (inout ProtoWriter) -> Void) {
        var inner = ProtoWriter()
        build(&inner)
        bytes(field: field, inner.bytes)
    }

    static func build(_ build: (inout ProtoWriter) -> Void) -> [UInt8] {
        var writer = ProtoWriter()
        build(&writer)
        return writer.bytes
    }
}
