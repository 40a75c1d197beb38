import Foundation
import ReceiptsFuzzing

#if FUZZING
import CLibFuzzer
#endif

/// Runs a fuzz target. Built by `deploy/fuzz.sh` (`-sanitize=fuzzer,address -DFUZZING`) it is
/// libFuzzer's driver; built plainly it runs the inputs it is given once each, to reproduce a
/// finding without the sanitizers.
///
///     receipts-fuzz --target=TARGET [libFuzzer flags] [corpus directories or input files]
///     receipts-fuzz seeds DIRECTORY    (writes the seed corpus, one directory per target)
///
/// The target is a `--` flag so that it stays on the command line libFuzzer hands to the
/// processes it starts itself (`-jobs`, `-fork`, `-merge`), which ignore such flags.
@main
enum ReceiptsFuzz {
    static func main() throws {
        let arguments = CommandLine.arguments
        if arguments.count == 3, arguments[1] == "seeds" {
            try writeSeeds(to: arguments[2])
            return
        }
        let names = arguments.compactMap { $0.hasPrefix("--target=") ? String($0.dropFirst(9)) : nil }
        guard names.count == 1, let target = FuzzTarget(rawValue: names[0]) else {
            let targets = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
            FileHandle.standardError.write(
                Data("usage: receipts-fuzz --target=\(targets) [flags] [inputs...] | receipts-fuzz seeds DIR\n".utf8)
            )
            exit(2)
        }
        #if FUZZING
        selected = target
        var flags = arguments
        if !flags.contains(where: { $0.hasPrefix("-max_len=") }) {
            flags.insert("-max_len=\(target.maxInputLength)", at: 1)
        }
        exit(runLibFuzzer(flags))
        #else
        try runOnce(target, inputs: arguments.dropFirst().filter { !$0.hasPrefix("-") })
        #endif
    }

    #if FUZZING
    /// The target libFuzzer's callback runs: set once, before the driver starts.
    nonisolated(unsafe) static var selected = FuzzTarget.engine

    /// Runs one input; a broken invariant is a crash, which libFuzzer records with its input.
    static let testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
        let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        do {
            try selected.run(input)
        } catch {
            fatalError("\(selected.rawValue): \(error)")
        }
        return 0
    }

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
    static func runOnce(_ target: FuzzTarget, inputs: [String]) throws {
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
