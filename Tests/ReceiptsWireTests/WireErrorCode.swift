import ReceiptsWire

/// The code of the `WireError` that `body` throws; nil when it throws none (or another error).
func wireErrorCode<Result>(of body: () throws -> Result) -> WireError.Code? {
    do {
        _ = try body()
        return nil
    } catch {
        return (error as? WireError)?.code
    }
}
