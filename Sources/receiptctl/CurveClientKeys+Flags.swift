import ArgumentParser
import Foundation
import ReceiptsClient
import ZeroMQ

extension CurveClientKeys {
    /// The keys receiptctl's two CURVE flags name (`--curve-server-key-file`,
    /// `--curve-client-key-file`), else their `RECEIPTD_CURVE_*` variables; nil for plaintext.
    ///
    /// - Throws: `ValidationError` if only one file is given or a file holds no valid key.
    static func fromFlags(serverPublicKeyFile: String?, clientSecretKeyFile: String?) throws -> CurveClientKeys? {
        do {
            return try fromFlagsOrEnvironment(
                serverPublicKeyFile: serverPublicKeyFile,
                clientSecretKeyFile: clientSecretKeyFile
            )
        } catch {
            throw ValidationError("CURVE: \(error.message)")
        }
    }
}
