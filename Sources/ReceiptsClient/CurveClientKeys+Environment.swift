import Foundation
public import ZeroMQ

extension CurveClientKeys {
    /// The variables a tool's two CURVE flags fall back on.
    static let serverPublicKeyFileVariable = "RECEIPTD_CURVE_SERVER_PUBLIC_KEY_FILE"
    static let clientSecretKeyFileVariable = "RECEIPTD_CURVE_CLIENT_SECRET_KEY_FILE"

    /// The keys a tool's two CURVE flags name (server public key file, client secret key file),
    /// each else its `RECEIPTD_CURVE_*` variable; nil for plaintext. The tools (receiptctl,
    /// receipts-web, receipts-loadgen) all read their keys this way.
    ///
    /// - Throws: As ``load(serverPublicKeyFile:secretKeyFile:)``: only one file given, or a
    ///   file that holds no valid key.
    public static func fromFlagsOrEnvironment(
        serverPublicKeyFile: String?,
        clientSecretKeyFile: String?
    ) throws(ZMQError) -> CurveClientKeys? {
        let environment = ProcessInfo.processInfo.environment
        return try load(
            serverPublicKeyFile: serverPublicKeyFile ?? environment[serverPublicKeyFileVariable],
            secretKeyFile: clientSecretKeyFile ?? environment[clientSecretKeyFileVariable]
        )
    }
}
