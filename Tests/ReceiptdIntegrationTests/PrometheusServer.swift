import Foundation
import ReceiptsTestKit
import Testing

/// Debian's `prometheus` on loopback, scraping one target every second, with its data in a
/// temporary directory; every wait is bounded and `stop` kills it.
final class PrometheusServer {
    /// How long start-up and a scraped value may take.
    static let deadlineSeconds = 30.0

    let address: String
    private let process = Process()
    private let directory: String

    /// Starts Prometheus on a free loopback port with a config that scrapes `target`.
    /// - Parameters:
    ///   - binary: The prometheus executable.
    ///   - target: The `host:port` to scrape at `/metrics`.
    init(binary: String, target: String) throws {
        directory = NSTemporaryDirectory() + "prometheus-test-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        address = "127.0.0.1:\(try LoopbackPort.free())"
        let config = """
            global:
              scrape_interval: 1s
              evaluation_interval: 1s
            scrape_configs:
              - job_name: receiptd
                scrape_interval: 1s
                scrape_timeout: 1s
                static_configs:
                  - targets: ["\(target)"]
            """
        try config.write(toFile: "\(directory)/prometheus.yml", atomically: true, encoding: .utf8)
        let log = FileManager.default.createFile(atPath: "\(directory)/prometheus.log", contents: nil)
        guard log, let handle = FileHandle(forWritingAtPath: "\(directory)/prometheus.log") else {
            throw IntegrationError("cannot create \(directory)/prometheus.log")
        }
        process.standardOutput = handle
        process.standardError = handle
        try process.runTiedToTest(
            binary,
            [
                "--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
                "--web.listen-address=\(address)", "--log.level=warn",
            ]
        )
    }

    deinit { stop() }

    /// Starts Prometheus and waits until it is ready. The free port is chosen before Prometheus
    /// binds it, so another test's socket can take it in between ("address already in use": CI
    /// saw it once); that start is tried again on another port, up to 3 times.
    static func startedAndReady(binary: String, target: String) async throws -> PrometheusServer {
        var attempts = 0
        while true {
            let server = try PrometheusServer(binary: binary, target: target)
            do {
                try await server.waitUntilReady()
                return server
            } catch {
                attempts += 1
                server.stop()
                guard attempts < 3, "\(error)".contains("address already in use") else { throw error }
            }
        }
    }

    /// Kills Prometheus and removes its directory; idempotent.
    func stop() {
        if process.isRunning {
            process.terminate()
            if !process.waitForExit(seconds: 5) {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Waits until `/-/ready` answers 200.
    func waitUntilReady() async throws {
        let deadline = Date().addingTimeInterval(Self.deadlineSeconds)
        while Date() < deadline {
            guard process.isRunning else { throw IntegrationError("prometheus exited: \(log())") }
            if let response = try? await HTTPProbe.get(address, "/-/ready"), response.status == 200 { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw IntegrationError("prometheus not ready within \(Self.deadlineSeconds) s: \(log())")
    }

    /// Queries `promql` until its single sample equals `expected`.
    /// - Returns: The last value seen (equal to `expected`).
    /// - Throws: if it never does within the deadline, naming the last value seen.
    func waitForValue(of promql: String, toEqual expected: Double) async throws -> Double {
        let deadline = Date().addingTimeInterval(Self.deadlineSeconds)
        var last: Double?
        while Date() < deadline {
            last = try await value(of: promql)
            if last == expected { return expected }
            try await Task.sleep(for: .milliseconds(250))
        }
        throw IntegrationError(
            "\(promql) is \(last.map { "\($0)" } ?? "absent") after \(Self.deadlineSeconds) s, expected \(expected)"
        )
    }

    /// The value of the one sample `promql` returns through `/api/v1/query`, nil if none.
    private func value(of promql: String) async throws -> Double? {
        var components = URLComponents()
        components.path = "/api/v1/query"
        components.queryItems = [URLQueryItem(name: "query", value: promql)]
        let response = try await HTTPProbe.get(
            address,
            components.percentEncodedQuery.map { "/api/v1/query?\($0)" } ?? ""
        )
        guard response.status == 200,
            let object = try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any],
            let data = object["data"] as? [String: Any], let result = data["result"] as? [[String: Any]]
        else { throw IntegrationError("unexpected query answer \(response.status): \(response.body)") }
        guard result.count <= 1 else { throw IntegrationError("\(promql) returned \(result.count) series") }
        guard let sample = result.first?["value"] as? [Any], sample.count == 2, let text = sample[1] as? String else {
            return nil
        }
        return Double(text)
    }

    private func log() -> String {
        (try? String(contentsOfFile: "\(directory)/prometheus.log", encoding: .utf8)) ?? ""
    }
}
