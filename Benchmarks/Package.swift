// swift-tools-version: 6.1
import PackageDescription

// Micro-benchmarks of the engine's apply path, the codec and the log, with ordo-one/benchmark.
// A package of its own (as apple/swift-nio's Benchmarks/), so the service's build and tests
// stay light. Run from this directory: `swift package --disable-sandbox benchmark`.
// The end-to-end benchmarks are `receipts-loadgen bench` in the main package (BENCHMARKS.md).
let package = Package(
    name: "benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named explicitly: a path dependency is otherwise identified by its directory name.
        .package(name: "receiptd", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "ReceiptsBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ReceiptsCore", package: "receiptd"),
                .product(name: "ReceiptsWire", package: "receiptd"),
                .product(name: "ReceiptLog", package: "receiptd"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/ReceiptsBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        )
    ]
)
