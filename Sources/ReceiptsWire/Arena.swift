/// A bump allocator for the C structs and strings of one message being packed.
///
/// protobuf-c packs from plain C structs that hold raw pointers, so everything a message
/// points to must stay put until `pack` returns. Copying it all into a few large blocks
/// (instead of one allocation per string or sub-message) keeps encoding cheap, and the
/// whole arena is freed at once when it goes out of scope.
struct Arena: ~Copyable {
    private var blocks: [UnsafeMutableRawPointer] = []
    private var cursor: UnsafeMutableRawPointer?
    private var end: UnsafeMutableRawPointer?
    private var nextBlockSize: Int

    /// Creates an empty arena whose first block holds `expectedBytes` (it grows past that).
    init(expectedBytes: Int) {
        nextBlockSize = max(expectedBytes, 256)
    }

    deinit {
        for block in blocks {
            block.deallocate()
        }
    }

    /// Uninitialised memory that stays valid for the arena's lifetime.
    mutating func allocate(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer {
        if let cursor, let end {
            let start = cursor.alignedUp(toMultipleOf: alignment)
            if end - start >= byteCount {
                self.cursor = start + byteCount
                return start
            }
        }
        let size = max(nextBlockSize, byteCount)
        let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        blocks.append(block)
        nextBlockSize = size * 2
        cursor = block + byteCount
        end = block + size
        return block
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
        var string = string
        return string.withUTF8 { utf8 in
            let copy = allocate(byteCount: utf8.count + 1, alignment: 1)
            if let source = utf8.baseAddress {
                copy.copyMemory(from: source, byteCount: utf8.count)
            }
            copy.storeBytes(of: 0, toByteOffset: utf8.count, as: UInt8.self)
            return copy.bindMemory(to: CChar.self, capacity: utf8.count + 1)
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
}
