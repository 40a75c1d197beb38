import CReceiptsProto
import ReceiptsCore

/// The two calls into protobuf-c every codec makes: unpack a frame, pack a message.
enum ProtobufC {
    /// Unpacks `frame` with protobuf-c's default allocator, hands the message to `body`, and
    /// frees it with the generated `__free_unpacked` whatever `body` does.
    ///
    /// protobuf-c returns NULL for any body it cannot parse (truncated, bad wire type, length
    /// prefix past the end, ...), which becomes `.malformedFrame`. No size limit here: the
    /// caller checks frame sizes before decoding.
    static func unpack<Message, Result>(
        _ frame: UnsafeRawBufferPointer,
        as name: String,
        unpack: (UnsafeMutablePointer<ProtobufCAllocator>?, Int, UnsafePointer<UInt8>?) -> UnsafeMutablePointer<
            Message
        >?,
        free: (UnsafeMutablePointer<Message>?, UnsafeMutablePointer<ProtobufCAllocator>?) -> Void,
        _ body: (Message) throws(WireError) -> Result
    ) throws(WireError) -> Result {
        let bytes = frame.baseAddress?.assumingMemoryBound(to: UInt8.self)
        guard let message = unpack(nil, frame.count, bytes) else {
            throw WireError(code: .malformedFrame, message: "not a valid \(name) body (\(frame.count) bytes)")
        }
        defer { free(message, nil) }
        return try body(message.pointee)
    }

    /// Packs `message` into a new byte array of exactly its packed size.
    static func pack<Message>(
        _ message: UnsafePointer<Message>,
        size: (UnsafePointer<Message>?) -> Int,
        pack: (UnsafePointer<Message>?, UnsafeMutablePointer<UInt8>?) -> Int
    ) -> [UInt8] {
        let count = size(message)
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = count == 0 ? 0 : pack(message, buffer.baseAddress)
            precondition(initialized == count, "protobuf-c packed \(initialized) bytes, predicted \(count)")
        }
    }

    /// Runs a `[UInt8]` decode through the `UnsafeRawBufferPointer` one.
    static func withBytes<Result>(
        _ frame: [UInt8],
        _ decode: (UnsafeRawBufferPointer) throws(WireError) -> Result
    ) throws(WireError) -> Result {
        let result = frame.withUnsafeBytes { bytes in
            Swift.Result { () throws(WireError) -> Result in try decode(bytes) }
        }
        return try result.get()
    }
}

extension String {
    /// A Swift string from a protobuf-c string field; invalid UTF-8 is repaired with U+FFFD
    /// (peers are not trusted to send valid UTF-8) and NULL reads as "".
    @inline(__always)
    init(wire pointer: UnsafePointer<CChar>?) {
        if let pointer {
            self.init(cString: pointer)
        } else {
            self = ""
        }
    }

    /// The strings of a protobuf-c repeated string field.
    static func array(wire pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, count: Int) -> [String] {
        guard let pointers, count > 0 else { return [] }
        return (0..<count).map { String(wire: pointers[$0]) }
    }
}

extension Array {
    /// The elements of a protobuf-c repeated message field, converted by `transform`.
    @inline(__always)
    init<Message, Failure: Error>(
        wire pointers: UnsafeMutablePointer<UnsafeMutablePointer<Message>?>?,
        count: Int,
        _ transform: (Message) throws(Failure) -> Element
    ) throws(Failure) {
        self = []
        guard let pointers, count > 0 else { return }
        reserveCapacity(count)
        for index in 0..<count {
            if let message = pointers[index] {
                append(try transform(message.pointee))
            }
        }
    }
}

extension Optional where Wrapped == Timestamp {
    /// A time field: 0 means absent.
    @inline(__always)
    init(wire milliseconds: Int64) {
        self = milliseconds == 0 ? nil : Timestamp(milliseconds: milliseconds)
    }

    /// The time field value: absent is 0.
    var wire: Int64 {
        self?.milliseconds ?? 0
    }
}
