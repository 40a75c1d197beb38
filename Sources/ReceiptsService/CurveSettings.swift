public import ZeroMQ

/// CurveZMQ on every endpoint: the worker's secret key and the client keys allowed per role.
public struct CurveSettings: Sendable {
    /// The worker's secret key (never logged; its `description` is redacted).
    public var secretKey: CurveKey
    /// One allowlist file per role; a role without a file admits nobody. Re-read on
    /// `ReceiptService.reloadKeys()` (SIGHUP in receiptd).
    public var allowlistFiles: [ClientRole: String]

    /// Settings from a secret key and the allowlist files.
    public init(secretKey: CurveKey, allowlistFiles: [ClientRole: String]) {
        self.secretKey = secretKey
        self.allowlistFiles = allowlistFiles
    }
}
