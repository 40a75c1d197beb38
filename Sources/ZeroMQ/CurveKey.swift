import CZeroMQ
import Foundation

/// A CurveZMQ (RFC 26) key: 32 bytes, written as 40 characters of Z85 in files and options.
///
/// The `description` of a key never prints it, so a key in a log line or an error message
/// cannot leak; log ``bytes`` only through a fingerprint.
public struct CurveKey: Hashable, Sendable, CustomStringConvertible {
    /// The key's 32 bytes.
    public let bytes: [UInt8]

    /// Decodes a key from its 40-character Z85 text.
    /// - Throws: ``ZMQError/Code-swift.struct/invalidArgument`` if `z85` is not 40 Z85 characters.
    public init(z85: String) throws(ZMQError) {
        let text = Array(z85.utf8)
        guard text.count == 40 else {
            throw ZMQError(
                code: .invalidArgument,
                message: "a CURVE key is 40 Z85 characters, got \(text.count)",
                operation: "z85 decode"
            )
        }
        var decoded = [UInt8](repeating: 0, count: 32)
        let ok = (text + [0]).withUnsafeBufferPointer { source in
            source.withMemoryRebound(to: CChar.self) { zmq_z85_decode(&decoded, $0.baseAddress) != nil }
        }
        guard ok else {
            throw ZMQError(code: .invalidArgument, message: "not a Z85 CURVE key", operation: "z85 decode")
        }
        try self.init(bytes: decoded)
    }

    /// A key from its 32 bytes (as a ZAP request carries a CURVE client's key).
    /// - Throws: ``ZMQError/Code-swift.struct/invalidArgument`` unless there are exactly 32 bytes.
    public init(bytes: [UInt8]) throws(ZMQError) {
        guard bytes.count == 32 else {
            throw ZMQError(
                code: .invalidArgument,
                message: "a CURVE key is 32 bytes, got \(bytes.count)",
                operation: "curve key"
            )
        }
        self.bytes = bytes
    }

    /// A key from a 41-byte, NUL-terminated Z85 buffer that libzmq filled.
    private init(filled text: [CChar]) throws(ZMQError) {
        try self.init(z85: Self.string(text))
    }

    /// The key as 40 characters of Z85.
    public var z85: String {
        var text = [CChar](repeating: 0, count: 41)
        _ = zmq_z85_encode(&text, bytes, bytes.count)
        return Self.string(text)
    }

    private static func string(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Never the key itself.
    public var description: String { "CurveKey(redacted)" }

    /// Reads a file of one key, as ``keys(in:)`` parses it (a secret key file, a server's public key).
    /// - Throws: ``ZMQError/Code-swift.struct/invalidArgument`` naming the file if it cannot be
    ///   read or does not hold exactly one key (the message never contains the file's content).
    public static func read(file path: String) throws(ZMQError) -> CurveKey {
        let keys = try readAll(file: path)
        guard keys.count == 1, let key = keys.first else {
            throw ZMQError(
                code: .invalidArgument,
                message: "\(path) must hold one key, it holds \(keys.count)",
                operation: "read key"
            )
        }
        return key
    }

    /// Reads a file of keys, as ``keys(in:)`` parses it (an allowlist).
    /// - Throws: ``ZMQError/Code-swift.struct/invalidArgument`` naming the file and line.
    public static func readAll(file path: String) throws(ZMQError) -> [CurveKey] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ZMQError(code: .invalidArgument, message: "cannot read \(path): \(error)", operation: "read key")
        }
        do {
            return try keys(in: text)
        } catch {
            throw ZMQError(code: .invalidArgument, message: "\(path) \(error.message)", operation: "read key")
        }
    }

    /// Parses key file text: one Z85 key per line, optionally followed by whitespace and a name;
    /// empty lines and lines starting with `#` are ignored.
    /// - Throws: ``ZMQError/Code-swift.struct/invalidArgument`` naming the first bad line (never its content).
    public static func keys(in text: String) throws(ZMQError) -> [CurveKey] {
        var keys: [CurveKey] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.drop { $0.isWhitespace }
            guard let first = trimmed.first, first != "#" else { continue }
            do {
                keys.append(try CurveKey(z85: String(trimmed.prefix { !$0.isWhitespace })))
            } catch {
                throw ZMQError(
                    code: .invalidArgument,
                    message: "line \(index + 1): \(error.message)",
                    operation: "read key"
                )
            }
        }
        return keys
    }

    /// The public key that belongs to this secret key (`zmq_curve_public`).
    /// - Throws: whatever libzmq reports (e.g. `notSupported` without CURVE support).
    public func publicKey() throws(ZMQError) -> CurveKey {
        var text = [CChar](repeating: 0, count: 41)
        guard zmq_curve_public(&text, z85) == 0 else { throw ZMQError.last("zmq_curve_public") }
        return try CurveKey(filled: text)
    }

    /// A new key pair from libzmq's `zmq_curve_keypair` (libsodium's random source).
    /// - Throws: `notSupported` if libzmq was built without CURVE.
    public static func makePair() throws(ZMQError) -> (publicKey: CurveKey, secretKey: CurveKey) {
        var publicText = [CChar](repeating: 0, count: 41)
        var secretText = [CChar](repeating: 0, count: 41)
        guard zmq_curve_keypair(&publicText, &secretText) == 0 else { throw ZMQError.last("zmq_curve_keypair") }
        return (try CurveKey(filled: publicText), try CurveKey(filled: secretText))
    }
}

/// What a CURVE client needs: the server's public key and its own key pair.
public struct CurveClientKeys: Sendable, Hashable {
    /// The public key of the server (receiptd) the client connects to.
    public var serverPublicKey: CurveKey
    /// The client's own public key, the one the server's allowlist names.
    public var publicKey: CurveKey
    /// The client's secret key.
    public var secretKey: CurveKey

    /// Keys given directly.
    public init(serverPublicKey: CurveKey, publicKey: CurveKey, secretKey: CurveKey) {
        self.serverPublicKey = serverPublicKey
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Keys from a tool's two key-file settings, or nil when neither is given (plaintext).
    /// - Throws: ``ZMQError/Code-swift.struct/invalidArgument`` if only one is given, or as
    ///   ``init(serverPublicKeyFile:secretKeyFile:)``.
    public static func load(serverPublicKeyFile: String?, secretKeyFile: String?) throws(ZMQError) -> CurveClientKeys? {
        switch (serverPublicKeyFile, secretKeyFile) {
        case (nil, nil):
            return nil
        case (let server?, let secret?):
            return try CurveClientKeys(serverPublicKeyFile: server, secretKeyFile: secret)
        default:
            throw ZMQError(
                code: .invalidArgument,
                message: "CURVE needs both the server's public key file and the client's secret key file",
                operation: "read key"
            )
        }
    }

    /// Keys read from files: the server's public key file and the client's secret key file
    /// (its public key is derived from the secret).
    /// - Throws: ``ZMQError`` naming the file that cannot be read or holds no valid key.
    public init(serverPublicKeyFile: String, secretKeyFile: String) throws(ZMQError) {
        let secretKey = try CurveKey.read(file: secretKeyFile)
        self.init(
            serverPublicKey: try CurveKey.read(file: serverPublicKeyFile),
            publicKey: try secretKey.publicKey(),
            secretKey: secretKey
        )
    }
}
