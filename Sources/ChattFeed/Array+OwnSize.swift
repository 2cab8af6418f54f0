extension Array where Element == UInt8 {
    /// These bytes in storage of their own size. An array keeps the capacity it grew into or was made with (and
    /// `Array(self[...])` shares it), which for an answer kept a while can be several times its bytes.
    var inStorageOfItsOwnSize: [UInt8] {
        guard capacity > count else { return self }
        return [UInt8](unsafeUninitializedCapacity: count) { copy, initialized in
            initialized = copy.initialize(fromContentsOf: self)
        }
    }
}
