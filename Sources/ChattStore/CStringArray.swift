#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// C copies of Swift strings for a libpq call, freed when this value goes away.
struct CStringArray: ~Copyable {
    private let pointers: [UnsafePointer<CChar>?]

    /// Copies `strings`; a nil element stays a NULL pointer (SQL NULL for query parameters).
    /// - Parameter nullTerminated: appends a NULL entry, as `PQconnectdbParams` needs.
    init(_ strings: [String?], nullTerminated: Bool = false) {
        var pointers = strings.map { string in string.map { UnsafePointer(Self.duplicate($0)) } }
        if nullTerminated { pointers.append(nil) }
        self.pointers = pointers
    }

    /// Calls `body` with the pointers, valid only during the call.
    func withPointers<T>(_ body: ([UnsafePointer<CChar>?]) -> T) -> T {
        body(pointers)
    }

    deinit {
        for pointer in pointers {
            free(UnsafeMutablePointer(mutating: pointer))
        }
    }

    private static func duplicate(_ string: String) -> UnsafeMutablePointer<CChar> {
        guard let copy = strdup(string) else {
            // strdup fails only when memory is exhausted; a NULL here would silently become SQL NULL
            // or cut the keyword list short, which is worse than stopping.
            fatalError("out of memory copying a C string")
        }
        return copy
    }
}
