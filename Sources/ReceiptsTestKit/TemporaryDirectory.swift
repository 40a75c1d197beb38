import Foundation

/// Fresh directories under /tmp, with short names: `ipc://` paths must stay under ~100 bytes.
package enum TemporaryDirectory {
    /// Makes a new directory `/tmp/<prefix>-XXXXXX`.
    /// - Parameter prefix: A few letters naming who made it.
    /// - Returns: Its path.
    /// - Throws: `TestKitError` `.system` if `mkdtemp` fails.
    package static func make(prefix: String) throws -> String {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw TestKitError(.system, "mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }
}
