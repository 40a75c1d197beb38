import Foundation

/// What each thread of a process has done so far, from `/proc/<pid>/task/*`: the times it gave
/// up its core to wait (voluntary context switches: each is a wake-up later), the times it was
/// preempted (involuntary ones), and its read- and write-family system calls (`io`'s `syscr` and
/// `syscw`: read, write, pread, eventfd and file I/O; not `recv`/`send` on sockets, which
/// libzmq's I/O thread uses, nor `fdatasync`). Threads of one name are summed.
struct ThreadActivity {
    struct Counts {
        var voluntarySwitches = 0
        var involuntarySwitches = 0
        var syscalls = 0

        static func - (later: Counts, earlier: Counts) -> Counts {
            Counts(
                voluntarySwitches: later.voluntarySwitches - earlier.voluntarySwitches,
                involuntarySwitches: later.involuntarySwitches - earlier.involuntarySwitches,
                syscalls: later.syscalls - earlier.syscalls
            )
        }

        static func + (one: Counts, other: Counts) -> Counts {
            Counts(
                voluntarySwitches: one.voluntarySwitches + other.voluntarySwitches,
                involuntarySwitches: one.involuntarySwitches + other.involuntarySwitches,
                syscalls: one.syscalls + other.syscalls
            )
        }
    }

    /// By thread name (`comm`).
    var threads: [String: Counts] = [:]

    /// The counts of `pid`'s threads now; threads that cannot be read are left out.
    static func sample(_ pid: Int32) -> ThreadActivity {
        var activity = ThreadActivity()
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            let directory = "/proc/\(pid)/task/\(task)"
            guard let comm = try? String(contentsOfFile: directory + "/comm", encoding: .utf8),
                let status = try? String(contentsOfFile: directory + "/status", encoding: .utf8)
            else { continue }
            let io = (try? String(contentsOfFile: directory + "/io", encoding: .utf8)) ?? ""
            let fields = Self.fields(status + io)
            let name = comm.trimmingCharacters(in: .whitespacesAndNewlines)
            let counts = Counts(
                voluntarySwitches: fields["voluntary_ctxt_switches"] ?? 0,
                involuntarySwitches: fields["nonvoluntary_ctxt_switches"] ?? 0,
                syscalls: (fields["syscr"] ?? 0) + (fields["syscw"] ?? 0)
            )
            activity.threads[name] = activity.threads[name, default: Counts()] + counts
        }
        return activity
    }

    /// What each thread did since `earlier` (threads that started meanwhile count from zero).
    func since(_ earlier: ThreadActivity) -> ThreadActivity {
        ThreadActivity(
            threads: threads.reduce(into: [:]) { result, entry in
                result[entry.key] = entry.value - (earlier.threads[entry.key] ?? Counts())
            }
        )
    }

    /// The sum over every thread.
    var total: Counts {
        threads.values.reduce(Counts(), +)
    }

    /// `name: value` lines as numbers.
    private static func fields(_ text: String) -> [String: Int] {
        var fields: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, let value = Int(parts[1].trimmingCharacters(in: .whitespaces)) {
                fields[String(parts[0])] = value
            }
        }
        return fields
    }
}
