import ReceiptsCore

extension ReceiptEngine {
    /// Requires that the engine's snapshot decodes and encodes again to the same bytes.
    ///
    /// - Returns: The engine restored from the snapshot.
    @discardableResult
    func requireSnapshotRoundTrip(
        _ what: String,
        configuration: EngineConfiguration
    ) throws(InvariantViolation) -> ReceiptEngine {
        let bytes = encodedState()
        let restored: ReceiptEngine
        do {
            restored = try ReceiptEngine(restoringFrom: bytes, configuration: configuration)
        } catch {
            throw InvariantViolation(description: "\(what) encodes to a snapshot its decoder refuses: \(error)")
        }
        try require(restored.encodedState() == bytes, "\(what) does not encode the same after a snapshot round trip")
        return restored
    }
}
