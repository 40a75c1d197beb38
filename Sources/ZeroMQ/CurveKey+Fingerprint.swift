import CSodium

extension CurveKey {
    /// A short, stable name for a key that does not reveal it: "sha256:" and the first 8 bytes
    /// of the key's SHA-256, in hex. Logs name client keys only this way.
    ///
    /// The hash is libsodium's, the library libzmq's CURVE already links.
    public var fingerprint: String {
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        _ = bytes.withUnsafeBufferPointer { key in
            crypto_hash_sha256(&digest, key.baseAddress, UInt64(key.count))
        }
        return "sha256:"
            + digest.prefix(8).map { byte in
                let hex = String(byte, radix: 16)
                return byte < 16 ? "0" + hex : hex
            }.joined()
    }
}
