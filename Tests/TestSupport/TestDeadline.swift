extension ContinuousClock.Instant {
    /// A deadline for work that does not wait on a database, which no test that passes reaches: ten minutes away.
    /// A minute was reached under the thread sanitizer, whose whole run starts thousands of tests at once on two
    /// cores and left some waiting on a thread for over a minute.
    public static var untilTheTestFails: Self { .now + .seconds(600) }
}
