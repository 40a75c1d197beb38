import ArgumentParser
import Foundation
import ZeroMQ

/// Writes a new CURVE key pair for receiptd or one of its clients.
struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a CurveZMQ key pair: <name>.key (secret, mode 0600) and <name>.pub (public, mode 0644).",
        discussion: """
            The keys are Z85 text, as zmq_curve_keypair makes them. Give receiptd its .key with \
            --curve-secret-key-file and its .pub to clients; list a client's .pub line in the key list of \
            its role (gateway, reader, operator). Existing files are never overwritten.
            """
    )

    @Argument(help: "Path and name of the pair, without extension (e.g. keys/gateway-1).")
    var name: String

    func run() throws {
        let pair = try CurveKey.makePair()
        let label = URL(fileURLWithPath: name).lastPathComponent
        try Self.create(
            "\(name).key",
            mode: 0o600,
            "# CURVE secret key of \(label): keep it private\n\(pair.secretKey.z85)\n"
        )
        try Self.create("\(name).pub", mode: 0o644, "\(pair.publicKey.z85) \(label)\n")
        print("wrote \(name).key and \(name).pub (public key fingerprint \(pair.publicKey.fingerprint))")
    }

    /// Creates `path` with `mode` from the start (no moment with wider permissions) and fails if it exists.
    private static func create(_ path: String, mode: mode_t, _ text: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw CtlError("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else {
            throw CtlError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}
