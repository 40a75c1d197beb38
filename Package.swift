// swift-tools-version: 6.1
import PackageDescription

/// Settings applied to every Swift target: Swift 6 language mode with strict concurrency.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "receiptd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "receiptd", targets: ["receiptd"]),
        .executable(name: "receiptctl", targets: ["receiptctl"]),
        .executable(name: "receipts-loadgen", targets: ["receipts-loadgen"]),
        .library(name: "ReceiptsCore", targets: ["ReceiptsCore"]),
        .library(name: "ReceiptsWire", targets: ["ReceiptsWire"]),
        .library(name: "ReceiptLog", targets: ["ReceiptLog"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "ReceiptsService", targets: ["ReceiptsService"]),
        .library(name: "ReceiptsClient", targets: ["ReceiptsClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        // C libraries from Debian packages, found through pkg-config.
        .systemLibrary(name: "CZeroMQ", pkgConfig: "libzmq", providers: [.apt(["libzmq3-dev"])]),
        .systemLibrary(name: "CProtobufC", pkgConfig: "libprotobuf-c", providers: [.apt(["libprotobuf-c-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // libsodium, which libzmq's CURVE links (libzmq3-dev depends on libsodium-dev): SHA-256
        // for key fingerprints.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        // protoc-c output for proto/receipts.proto (regenerate with proto/generate.sh).
        .target(name: "CReceiptsProto", dependencies: ["CProtobufC"]),
        .target(name: "CReceiptsRouting"),
        .executableTarget(name: "gateway-example", dependencies: ["CReceiptsProto", "CReceiptsRouting", "CZeroMQ"]),

        // The domain: events, state, rules, status, display text. Pure Swift, no I/O.
        .target(name: "ReceiptsCore", swiftSettings: swiftSettings),
        // Frames <-> ReceiptsCore values through CReceiptsProto; no C type escapes.
        .target(name: "ReceiptsWire", dependencies: ["ReceiptsCore", "CReceiptsProto"], swiftSettings: swiftSettings),
        // The storage engine: segments, group commit, recovery, snapshots.
        .target(
            name: "ReceiptLog",
            dependencies: ["CZlib", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // A small, safe Swift face of libzmq.
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ", "CSodium"], swiftSettings: swiftSettings),
        // A replicated member's decisions and its side of the protocol, without sockets or
        // threads, time passed in: the member machine, the in-sync set, terms, leases, the
        // coordinator protocol, the primary's shipper and gate, the standby's follower.
        .target(
            name: "ReceiptsReplication",
            dependencies: ["ReceiptLog", "ReceiptsWire", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // The daemon's wiring: sockets, loop, log, engine, publishing.
        .target(
            name: "ReceiptsService",
            dependencies: [
                "ReceiptsCore", "ReceiptsWire", "ReceiptLog", "ReceiptsReplication", "ZeroMQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        // The gateway library: routing, batching, acknowledged retries, Clone-pattern
        // subscriptions, typed queries and an optional outbox (a ReceiptLog); every tool of
        // this package uses it.
        .target(
            name: "ReceiptsClient",
            dependencies: [
                "ReceiptsCore", "ReceiptsWire", "ReceiptLog", "ZeroMQ",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // The etcd coordinator (deploy/REPLICATION.md, section 3): leases, the campaign
        // transaction and the watch, through etcd's JSON gateway over HTTP/1.1 on swift-nio.
        .target(
            name: "ReceiptsCoordination",
            dependencies: [
                "ReceiptsReplication",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),

        // The daemon: flags, the Prometheus backend, the HTTP endpoint and the ServiceGroup.
        .executableTarget(
            name: "receiptd",
            dependencies: [
                "ReceiptsService", "ReceiptsCoordination", "ReceiptsReplication", "ReceiptsWire", "ZeroMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The reference chat gateway: a demo chat backend, one static page, and a WebSocket
        // bridge between browsers and receiptd through ReceiptsClient.
        .executableTarget(
            name: "receipts-web",
            dependencies: [
                "ReceiptsClient", "ReceiptsCore", "ReceiptsWire", "ZeroMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Public")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "receiptctl",
            dependencies: [
                "ReceiptsClient", "ReceiptsWire", "ReceiptsCore", "ReceiptLog", "ZeroMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The load generator and end-to-end benchmark harness (BENCHMARKS.md); the raw baseline
        // decodes with protobuf-c directly, the storage rows drive ReceiptLog in-process, queries
        // and the client-path rows go through ReceiptsClient.
        .executableTarget(
            name: "receipts-loadgen",
            dependencies: [
                "ReceiptsService", "ReceiptsClient", "ReceiptsWire", "ReceiptsCore", "ReceiptLog", "ZeroMQ",
                "CReceiptsProto", "ReceiptsTestKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // What the integration tests and the load generator share: the one receiptd launcher (its
        // environment cleared), the sync/async bridge, SplitMix64, ScriptedWorker, a real etcd on
        // loopback and the in-memory coordinator that stands for one in process.
        .target(
            name: "ReceiptsTestKit",
            dependencies: ["ReceiptsClient", "ReceiptsCore", "ReceiptsReplication", "ReceiptsWire", "ZeroMQ"],
            swiftSettings: swiftSettings
        ),

        // Swift Testing traits the test targets share.
        .target(
            name: "ReceiptsTestTraits",
            dependencies: ["ReceiptsTestKit"],
            swiftSettings: swiftSettings
        ),

        // libFuzzer targets for the decoders, the segment scanner and the engine; deploy/fuzz.sh
        // builds receipts-fuzz with -sanitize=fuzzer,address and runs each target.
        .target(
            name: "ReceiptsFuzzing",
            dependencies: ["ReceiptsCore", "ReceiptsWire", "ReceiptLog"],
            swiftSettings: swiftSettings
        ),
        .systemLibrary(name: "CLibFuzzer"),
        .executableTarget(
            name: "receipts-fuzz",
            dependencies: ["ReceiptsFuzzing", "CLibFuzzer"],
            swiftSettings: swiftSettings
        ),

        .testTarget(
            name: "ReceiptsCoreTests",
            dependencies: ["ReceiptsCore", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReceiptsWireTests",
            dependencies: ["ReceiptsWire", "ReceiptsCore", "ReceiptsTestKit"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReceiptLogTests",
            dependencies: ["ReceiptLog", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ReceiptsReplicationTests",
            dependencies: ["ReceiptsReplication"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReceiptsServiceTests",
            dependencies: ["ReceiptsService", "ReceiptsCore", "ReceiptsReplication", "ReceiptsWire"],
            swiftSettings: swiftSettings
        ),
        // The worker's pipeline in process: publishing, coalescing, backpressure, compaction, retention.
        .testTarget(
            name: "ReceiptPipelineTests",
            dependencies: [
                "ReceiptsService", "ReceiptsCore", "ReceiptsReplication", "ReceiptsWire", "ReceiptLog", "ZeroMQ",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReceiptsClientTests",
            dependencies: [
                "ReceiptsClient", "ReceiptsCore", "ReceiptsWire", "ReceiptLog", "ZeroMQ",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Runs the committed corpus (seeds and every crash found) through each fuzz target.
        .testTarget(
            name: "ReceiptsFuzzingTests",
            dependencies: ["ReceiptsFuzzing", "ReceiptsCore", "ReceiptLog"],
            exclude: ["Corpus"],
            swiftSettings: swiftSettings
        ),
        // The coordinators' conformance (in memory and against a real etcd) and the gateway's JSON.
        .testTarget(
            name: "ReceiptsCoordinationTests",
            dependencies: ["ReceiptsCoordination", "ReceiptsReplication", "ReceiptsTestKit", "ReceiptsTestTraits"],
            swiftSettings: swiftSettings
        ),
        // The deterministic simulation of a replicated ordinal (ClusterSimulationTests).
        .testTarget(
            name: "ReceiptsSimulationTests",
            dependencies: ["ReceiptsCore", "ReceiptsReplication", "ReceiptsTestKit"],
            swiftSettings: swiftSettings
        ),
        // Starts the built receiptd binary and talks to it over real sockets.
        .testTarget(
            name: "ReceiptdIntegrationTests",
            dependencies: [
                "ReceiptsClient", "ReceiptsCore", "ReceiptsTestKit", "ReceiptsTestTraits", "ReceiptsWire", "ZeroMQ",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
