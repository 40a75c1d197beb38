/// The closure a new pthread runs, boxed to pass through `pthread_create`'s context pointer.
final class ThreadBody {
    let run: () -> Void

    init(_ run: @escaping () -> Void) {
        self.run = run
    }
}
