import CReceiptsProto
import ReceiptsCore

/// The two calls into protobuf-c every codec makes: unpack a frame, pack a message.
enum ProtobufC {
    /// Unpacks `frame` into an ``Arena``, hands the message to `body`, and releases
    /// everything protobuf-c allocated at once when `body` returns or throws.
    ///
    /// The message and everything it points to live in the arena, so `body` must copy out
    /// what it keeps (Swift values always do). protobuf-c returns NULL for any body it cannot
    /// parse (truncated, bad wire type, length prefix past the end, ...), which becomes
    /// `.malformedFrame`. No size limit here: the caller checks frame sizes before decoding.
    static func unpack<Message, Result>(
        _ frame: UnsafeRawBufferPointer,
        as name: String,
        unpack: (UnsafeMutablePointer<ProtobufCAllocator>?, Int, UnsafePointer<UInt8>?) -> UnsafeMutablePointer<
            Message
        >?,
        _ body: (Message) throws(WireError) -> Result
    ) throws(WireError) -> Result {
        let bytes = frame.baseAddress?.assumingMemoryBound(to: UInt8.self)
        return try Arena.with(expectedBytes: unpackedBytesEstimate(frameBytes: frame.count)) {
            (arena) throws(WireError) in
            try arena.withAllocator { (allocator) throws(WireError) in
                guard let message = unpack(allocator, frame.count, bytes) else {
                    throw WireError(code: .malformedFrame, message: "not a valid \(name) body (\(frame.count) bytes)")
                }
                return try body(message.pointee)
            }
        }
    }

    /// About how many bytes protobuf-c allocates to unpack a frame of `frameBytes` bytes.
    ///
    /// Each small field of a frame becomes a pointer, a struct or a NUL-terminated string of
    /// several times its encoded size (an event of ~33 bytes unpacks into ~280 bytes of
    /// structs, strings, pointer arrays, scanning scratch and the size word before each of its
    /// 7 allocations), so one block of 10x the frame holds a typical frame. The first block is
    /// at most 4 MiB so a huge frame does not reserve a huge block up front; it gets further,
    /// doubling blocks as it needs them.
    static func unpackedBytesEstimate(frameBytes: Int) -> Int {
        min(frameBytes * 10, 4 << 20)
    }

    /// Packs `message`, built in `arena`, into a new byte array of exactly its packed size.
    ///
    /// protobuf-c packs into a buffer the caller promises is big enough, so the bytes are
    /// packed into room for ``sizeBound(fields:stringBytes:)`` in the arena (on the stack for
    /// small messages) and copied out once; that skips protobuf-c's size pass over the whole
    /// message. `fields` counts every field the message can set, sub-messages and repeated
    /// elements included (see ``fields(_:)``); the strings are every one the arena copied.
    static func pack<Message>(
        _ message: UnsafePointer<Message>,
        fields: Int,
        arena: inout Arena,
        pack: (UnsafePointer<Message>?, UnsafeMutablePointer<UInt8>?) -> Int
    ) -> [UInt8] {
        let bound = sizeBound(fields: fields, stringBytes: arena.stringBytes)
        let scratch = arena.make(UInt8.self, count: bound)
        let count = pack(message, scratch)
        precondition(count <= bound, "protobuf-c packed \(count) bytes into room for \(bound)")
        // Copying from a buffer (not `init(unsafeUninitializedCapacity:)`, whose allocation is
        // not specialised and looks the array's storage type up at run time on every call).
        return [UInt8](UnsafeBufferPointer(start: scratch, count: count))
    }

    /// An upper bound of the packed size of a message of at most `fields` set fields whose
    /// strings hold `stringBytes` UTF-8 bytes together.
    ///
    /// Every field costs at most a 12-byte head: a tag (2 bytes for field numbers below 2048;
    /// the proto's are all below 16, so 1) and a 10-byte varint, which is the value of a
    /// scalar or an enum (negative ones take all 10) or the length of a string or sub-message. Strings add their bytes (a C
    /// string is never longer than the Swift string it was copied from), sub-messages and
    /// repeated elements their own fields, which ``fields(_:)`` counts.
    static func sizeBound(fields: Int, stringBytes: Int) -> Int {
        fields * 12 + stringBytes
    }

    /// The number of fields a message type declares, read from its generated descriptor (so
    /// a field added to the proto raises every bound that counts it).
    @inline(__always)
    static func fields(_ descriptor: ProtobufCMessageDescriptor) -> Int {
        Int(descriptor.n_fields)
    }

    /// Packs `message` into a new byte array of exactly its packed size, measured first by
    /// protobuf-c's size pass (for messages whose size has no cheap bound).
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
    /// A Swift string from a protobuf-c string field of a reply, whose strings receiptd made
    /// from Swift strings; invalid UTF-8 is repaired with U+FFFD and NULL reads as "".
    /// Requests read theirs through ``RequestStrings``, which refuses invalid UTF-8.
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
