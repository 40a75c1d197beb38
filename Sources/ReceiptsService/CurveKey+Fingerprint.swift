import Crypto
public import ZeroMQ

extension CurveKey {
    /// A short, stable name for a key that does not reveal it: "sha256:" and the first 8 bytes
    /// of the key's SHA-256, in hex. Logs name client keys only this way.
    public var fingerprint: String {
        "sha256:"
            + SHA256.hash(data: bytes).prefix(8).map { byte in
                let hex = String(byte, radix: 16)
                return byte < 16 ? "0" + hex : hex
            }.joined()
    }
}
