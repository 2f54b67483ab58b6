/// Migrations at open (M1, M2, M4, <doc:MigratingAtStartUp>): every pending
/// step runs under exclusive access on the latest document, the result is
/// committed in one write, and clean-ups (removing a legacy file) run only
/// once that write is durable.
extension StoreCore {
    /// Runs `migrations`, reading the document under `policy`: the
    /// corruption policy of the open that runs them.
    func migrate(_ migrations: [any PreferencesMigration], policy: CorruptionPolicy) throws {
        let current = snapshot
        guard try migrations.contains(where: { try $0.shouldMigrate(current) }) else { return }
        // Without a lock (a distributed backend), a lost compare-and-swap
        // runs the steps again on the newer state rather than failing the open.
        let (ran, reports) = try committing("migrate") {
            () -> ([any PreferencesMigration], [PreferencesProblem])? in
            try refreshIfChanged(policy: policy)
            let (base, revision) = state.withLock { ($0.current.snapshot, $0.current.revision) }
            var working = MutablePreferences(snapshot: base, limits: limits)
            var ran: [any PreferencesMigration] = []
            // Each step that changes something is a change of its own,
            // with its own sequence number and entry (H1, H2).
            var steps: [PendingEntry] = []
            for migration in migrations where try migration.shouldMigrate(working.snapshot) {
                let before = (values: working.values, version: working.version)
                do {
                    try migration.migrate(&working)
                    if let failure = working.failure { throw failure }
                } catch let error as PreferencesError {
                    throw error
                } catch {
                    throw PreferencesError.migrationFailed(
                        step: migration.name, reason: "\(error)")
                }
                ran.append(migration)
                let step = entry(
                    .migration(name: migration.name), to: working, over: base, since: before)
                _ = working.takeCauses()
                if working.values != before.values || working.version != before.version {
                    steps.append(step)
                }
            }
            if working.values != base.values || working.version != base.version {
                guard try commit(working, over: base, adding: steps, ifRevision: revision) != nil
                else { return nil }
            }
            return (ran, working.reports)
        }
        var problems = reports
        for migration in ran {
            do {
                try migration.cleanUp()
            } catch {
                problems.append(
                    PreferencesProblem(
                        key: nil,
                        message: "clean-up of migration '\(migration.name)' failed: \(error)"))
            }
        }
        changeProblems { $0.problems.migration = problems }
    }
}
