import Foundation
import ReceiptsFuzzing

/// Runs a fuzz target. Built by `deploy/fuzz.sh` (`-sanitize=fuzzer,address -DFUZZING`) it is
/// libFuzzer's driver; built plainly it runs the inputs it is given once each, to reproduce a
/// finding without the sanitizers.
///
///     receipts-fuzz TARGET [libFuzzer flags] [corpus directories or input files]
///     receipts-fuzz seeds DIRECTORY    (writes the seed corpus, one directory per target)
@main
enum ReceiptsFuzz {
    /// The target libFuzzer's callback runs: set once, before the driver starts.
    nonisolated(unsafe) static var target = FuzzTarget.engine

    static func main() throws {
        var arguments = CommandLine.arguments
        if arguments.count == 3, arguments[1] == "seeds" {
            try writeSeeds(to: arguments[2])
            return
        }
        guard arguments.count >= 2, let target = FuzzTarget(rawValue: arguments[1]) else {
            let targets = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
            FileHandle.standardError.write(
                Data("usage: receipts-fuzz \(targets) [flags] [inputs...] | seeds DIR\n".utf8)
            )
            exit(2)
        }
        Self.target = target
        arguments.remove(at: 1)
        #if FUZZING
        if !arguments.contains(where: { $0.hasPrefix("-max_len=") }) {
            arguments.insert("-max_len=\(target.maxInputLength)", at: 1)
        }
        exit(runLibFuzzer(arguments))
        #else
        try runOnce(inputs: arguments.dropFirst().filter { !$0.hasPrefix("-") })
        #endif
    }

    /// Runs one input; a broken invariant is a crash, which libFuzzer records with its input.
    static let testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
        let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        do {
            try ReceiptsFuzz.target.run(input)
        } catch {
            fatalError("\(ReceiptsFuzz.target.rawValue): \(error)")
        }
        return 0
    }

    #if FUZZING
    /// Hands the command line (libFuzzer's flags and corpus directories) to libFuzzer.
    static func runLibFuzzer(_ arguments: [String]) -> Int32 {
        var argc = Int32(arguments.count)
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = .allocate(capacity: arguments.count + 1)
        for (i, argument) in arguments.enumerated() { argv![i] = strdup(argument) }
        argv![arguments.count] = nil
        return LLVMFuzzerRunDriver(&argc, &argv, testOneInput)
    }
    #else
    /// Runs every input file (or every file in an input directory) once.
    static func runOnce(inputs: [String]) throws {
        var files: [String] = []
        for input in inputs {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory) else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: input])
            }
            if isDirectory.boolValue {
                files += try FileManager.default.contentsOfDirectory(atPath: input).sorted().map { "\(input)/\($0)" }
            } else {
                files.append(input)
            }
        }
        for file in files {
            let input = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            do {
                try target.run(input)
            } catch {
                print("\(file): \(error)")
                exit(1)
            }
        }
        print("\(target.rawValue): \(files.count) inputs, no invariant broken")
    }
    #endif

    /// Writes `SeedCorpus` under `directory`, one directory per target.
    static func writeSeeds(to directory: String) throws {
        for target in FuzzTarget.allCases {
            let folder = URL(fileURLWithPath: directory).appendingPathComponent(target.rawValue)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (name, bytes) in SeedCorpus.seeds(for: target) {
                try Data(bytes).write(to: folder.appendingPathComponent(name))
            }
        }
    }
}

#if FUZZING
/// libFuzzer's entry point for a program that has its own `main`.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32
#endif
