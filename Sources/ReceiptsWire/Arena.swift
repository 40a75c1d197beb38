import CProtobufC
import CReceiptsProto

/// A bump allocator for everything one encode or decode call needs from C: the structs and
/// strings of a message being packed, the packed bytes before they are copied out, and every
/// allocation protobuf-c's unpack makes (see ``withAllocator(_:)``).
///
/// protobuf-c works on plain C structs that hold raw pointers, so everything a message points
/// to must stay put until the call returns. Bumping a cursor through a few blocks instead of
/// one `malloc` per struct or string is what makes the codec cheap: the first 1 KiB is on the
/// stack (a status update or a one-event frame never touches the heap), bigger calls get heap
/// blocks that double in size, and everything is released at once when the call ends.
struct Arena: ~Copyable {
    /// The stack block every arena starts with.
    static let stackBytes = 1024
    /// The alignment of everything handed to protobuf-c: its structs hold at most 8-byte fields.
    static let cAlignment = 8

    private var cursor: UnsafeMutableRawPointer
    private var end: UnsafeMutableRawPointer
    /// The newest heap block; each block's first word holds the address of the one before.
    private var heapBlocks: UnsafeMutableRawPointer?
    private var nextBlockSize: Int
    /// The UTF-8 bytes of every string ``cString(_:)`` copied, for ``ProtobufC/pack(_:fields:arena:pack:)``'s bound.
    private(set) var stringBytes = 0

    private init(stack: UnsafeMutableRawBufferPointer, nextBlockSize: Int) {
        // withUnsafeTemporaryAllocation never hands out a NULL base for a non-zero size.
        cursor = stack.baseAddress.unsafelyUnwrapped
        end = cursor + stack.count
        self.nextBlockSize = nextBlockSize
    }

    deinit {
        var block = heapBlocks
        while let current = block {
            block = current.load(as: UnsafeMutableRawPointer?.self)
            current.deallocate()
        }
    }

    /// Runs `body` with an arena whose memory lives until `body` returns.
    ///
    /// - Parameter expectedBytes: About how much the call allocates: beyond the stack block,
    ///   the first heap block is this big (later ones double), so a good guess means one
    ///   `malloc` for the whole call.
    @inline(__always)
    static func with<Result: ~Copyable, Failure: Error>(
        expectedBytes: Int,
        _ body: (inout Arena) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withUnsafeTemporaryAllocation(byteCount: stackBytes, alignment: 16) { (stack) throws(Failure) in
            var arena = Arena(stack: stack, nextBlockSize: max(expectedBytes, 4 * stackBytes))
            return try body(&arena)
        }
    }

    /// Uninitialised memory that stays valid for the arena's lifetime.
    @inline(__always)
    mutating func allocate(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer {
        let start = cursor.alignedUp(toMultipleOf: alignment)
        if end - start >= byteCount {
            cursor = start + byteCount
            return start
        }
        return allocateInNewBlock(byteCount: byteCount, alignment: alignment)
    }

    @inline(never)
    private mutating func allocateInNewBlock(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer {
        let header = max(MemoryLayout<UnsafeMutableRawPointer?>.stride, alignment)
        let size = max(nextBlockSize, header + byteCount)
        let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: max(alignment, 16))
        block.storeBytes(of: heapBlocks, as: UnsafeMutableRawPointer?.self)
        heapBlocks = block
        nextBlockSize = size * 2
        cursor = block + header + byteCount
        end = block + size
        return block + header
    }

    /// Room for `count` values of `type`, bound to it and uninitialised.
    mutating func make<T>(_ type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        allocate(byteCount: MemoryLayout<T>.stride * count, alignment: MemoryLayout<T>.alignment)
            .bindMemory(to: T.self, capacity: count)
    }

    /// A new C message, set to its defaults by its generated `__init` function.
    mutating func message<T>(_ initialize: (UnsafeMutablePointer<T>?) -> Void) -> UnsafeMutablePointer<T> {
        let message = make(T.self, count: 1)
        initialize(message)
        return message
    }

    /// A NUL-terminated copy of `string`.
    ///
    /// C strings end at the first NUL, so a Swift string with an embedded NUL is cut there.
    mutating func cString(_ string: String) -> UnsafeMutablePointer<CChar> {
        let count = string.utf8.count
        return string.withCString { source in
            let copy = allocate(byteCount: count + 1, alignment: 1)
            copy.copyMemory(from: source, byteCount: count + 1)
            stringBytes += count
            return copy.bindMemory(to: CChar.self, capacity: count + 1)
        }
    }

    /// A C array of NUL-terminated copies of `strings`, as a repeated string field wants it.
    mutating func cStrings(
        _ strings: [String]
    ) -> (count: Int, pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) {
        guard !strings.isEmpty else { return (0, nil) }
        let pointers = make(UnsafeMutablePointer<CChar>?.self, count: strings.count)
        for (index, string) in strings.enumerated() {
            (pointers + index).initialize(to: cString(string))
        }
        return (strings.count, pointers)
    }

    /// A C array of messages built from `elements`, as a repeated message field wants it.
    mutating func messages<Element, Message>(
        _ elements: [Element],
        _ build: (Element, inout Arena) -> UnsafeMutablePointer<Message>
    ) -> (count: Int, pointers: UnsafeMutablePointer<UnsafeMutablePointer<Message>?>?) {
        guard !elements.isEmpty else { return (0, nil) }
        let pointers = make(UnsafeMutablePointer<Message>?.self, count: elements.count)
        for (index, element) in elements.enumerated() {
            (pointers + index).initialize(to: build(element, &self))
        }
        return (elements.count, pointers)
    }

    /// Runs `body` with a protobuf-c allocator that takes its memory from this arena.
    ///
    /// protobuf-c's unpack makes one allocation per message, string and repeated field (and
    /// frees its scratch space before returning); from the arena each is a pointer bump and
    /// each free does nothing. What it unpacks is released with the arena, all at once, so
    /// the generated `__free_unpacked` is never called on it.
    ///
    /// Each allocation starts after a word holding its size (so it stays 8-byte aligned):
    /// protobuf-c ends a string it unpacks with a NUL, and the size is what tells its length
    /// when the field held a NUL byte too (see ``unpackedLength(of:)``). Only this allocator
    /// writes sizes: strings an encoder copies (``cString(_:)``) have none.
    @inline(__always)
    mutating func withAllocator<Result, Failure: Error>(
        _ body: (UnsafeMutablePointer<ProtobufCAllocator>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withUnsafeMutablePointer(to: &self) { (arena) throws(Failure) in
            var allocator = ProtobufCAllocator(
                alloc: { data, size in
                    data.unsafelyUnwrapped.assumingMemoryBound(to: Arena.self).pointee.allocateSized(byteCount: size)
                },
                free: { _, _ in },
                allocator_data: UnsafeMutableRawPointer(arena)
            )
            return try body(&allocator)
        }
    }

    /// The bytes before each allocation of ``withAllocator(_:)`` that hold its size.
    private static let sizeBytes = MemoryLayout<Int>.stride

    /// `byteCount` bytes, C-aligned, after a word holding `byteCount`.
    @inline(__always)
    private mutating func allocateSized(byteCount: Int) -> UnsafeMutableRawPointer {
        let start = allocate(byteCount: Self.sizeBytes &+ byteCount, alignment: Self.cAlignment)
        start.storeBytes(of: byteCount, as: Int.self)
        return start + Self.sizeBytes
    }

    /// The length in bytes of a string field that protobuf-c unpacked through
    /// ``withAllocator(_:)``, NUL bytes in it included: `strlen` stops at the first NUL, this
    /// does not.
    ///
    /// protobuf-c 1.4.1 allocates each string it unpacks with exactly its length plus one, for
    /// the NUL it ends it with (`do_alloc(allocator, len - pref_len + 1)` in
    /// `parse_required_member`). A field the frame does not set still holds protobuf-c's static
    /// empty string, which has no size before it.
    /// - Parameter string: A string field of a message unpacked in this arena, during the call.
    @inline(__always)
    static func unpackedLength(of string: UnsafePointer<CChar>) -> Int {
        if string == receipts_protobuf_c_empty_string() { return 0 }
        return UnsafeRawPointer(string).load(fromByteOffset: -sizeBytes, as: Int.self) - 1
    }
}

extension Arena {
    /// A copy of `bytes`, as a `bytes` field wants it.
    mutating func binary(_ bytes: [UInt8]) -> ProtobufCBinaryData {
        guard !bytes.isEmpty else { return ProtobufCBinaryData(len: 0, data: nil) }
        let copy = allocate(byteCount: bytes.count, alignment: 1)
        bytes.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        return ProtobufCBinaryData(len: bytes.count, data: copy.assumingMemoryBound(to: UInt8.self))
    }
}

extension [UInt8] {
    /// The bytes of a decoded `bytes` field.
    init(wire data: ProtobufCBinaryData) {
        guard let base = data.data, data.len > 0 else {
            self = []
            return
        }
        self = Array(UnsafeBufferPointer(start: base, count: data.len))
    }
}
