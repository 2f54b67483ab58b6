/// Publishing the keys a process declares (7.6, <doc:CommandLineTool>).
extension StoreCore {
    /// Adds `manifest` to the keys declared in this process and publishes
    /// them all through the backend's ``PreferencesStorage/manifests``, if
    /// it has them, on the store's queue (so never in the middle of a
    /// write). A failure is kept as a problem rather than
    /// thrown: a service that can read its store must not fail to start
    /// because the manifest, a help for operators, cannot be written.
    func declare(_ manifest: PreferencesManifest) async {
        await queue.run { self.publishDeclared(adding: manifest) }
    }

    private func publishDeclared(adding manifest: PreferencesManifest) {
        let declared = state.withLock { state in
            state.declared = state.declared.merging(manifest)
            state.secrets.formUnion(manifest.entries.filter(\.value.secret).keys)
            return state.declared
        }
        var problems: [PreferencesProblem] = []
        let program = PreferencesReplica.currentProgram
        do {
            if let published = storage.manifests {
                try published.publish(Array(declared.jsonText.utf8), program: program)
                // Other programs that declare a key differently (F1).
                var manifests = try PreferencesManifest.published(
                    in: published, skippingInvalid: true)
                manifests[program] = declared
                problems += PreferencesManifest.conflicts(among: manifests)
            }
        } catch {
            problems.append(
                PreferencesProblem(
                    key: nil, message: "the key manifest could not be published: \(error)"))
        }
        changeProblems { $0.problems.manifest = problems }
        reportManifest(declared.digest)
    }
}
