import Foundation
import Hummingbird
import HummingbirdWebSocket

/// The page's files (Public/ in the target's resources), read once at start.
struct StaticPage: Sendable {
    /// A file's bytes and its content type.
    struct File: Sendable {
        var contentType: String
        var bytes: Data
    }

    /// By URL path.
    var files: [String: File]

    /// Reads the committed files.
    /// - Throws: `CocoaError` if a resource is missing from the bundle.
    static func load() throws -> StaticPage {
        let names: [(path: String, name: String, type: String)] = [
            ("/", "index.html", "text/html; charset=utf-8"),
            ("/app.js", "app.js", "text/javascript; charset=utf-8"),
            ("/style.css", "style.css", "text/css; charset=utf-8"),
        ]
        var files: [String: File] = [:]
        for entry in names {
            guard let url = Bundle.module.url(forResource: entry.name, withExtension: nil, subdirectory: "Public")
            else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Public/\(entry.name)"])
            }
            files[entry.path] = File(contentType: entry.type, bytes: try Data(contentsOf: url))
        }
        return StaticPage(files: files)
    }

    /// Adds a GET route per file.
    func register(on router: Router<BasicWebSocketRequestContext>) {
        for (path, file) in files {
            router.get(RouterPath(path)) { _, _ in
                Response(
                    status: .ok,
                    headers: [.contentType: file.contentType, .cacheControl: "no-store"],
                    body: .init(byteBuffer: ByteBuffer(bytes: file.bytes))
                )
            }
        }
    }
}
