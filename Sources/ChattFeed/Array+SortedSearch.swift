extension Array where Element == Int {
    /// The index of the first element at least `value`, in an array sorted ascending (`count` when none is): a
    /// binary search.
    func firstIndex(atLeast value: Int) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
