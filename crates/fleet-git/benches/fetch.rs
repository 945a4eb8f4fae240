//! Fetch benchmark: a repository of 1,000 files (about 1 KiB each) in 50 directories, served over file://.
//! Prints the time and bytes of resolve, the first shallow fetch, reading every file of the tree, and an
//! incremental fetch after a commit that changes 10 files.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;

use fleet_git::{GitCache, GitSource};

fn main() {
    let remote = support::Remote::new("bench");
    for i in 0..1000 {
        let body: String = (0..20)
            .map(|line| format!("key{line}: value-{i}-{line}-padding-padding\n"))
            .collect();
        remote.write(&format!("dir{:02}/file{i:04}.yaml", i % 50), &body);
    }
    let first = remote.commit("1,000 files");
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = GitCache::new(cache_dir.path());
    let mut source = GitSource::new(remote.url());
    source.branch = Some("main".into());

    let started = Instant::now();
    let resolved = cache.resolve(&source).unwrap();
    let resolve_time = started.elapsed();
    assert_eq!(resolved, first);

    let stats = cache.fetch(&source, &first).unwrap();
    println!(
        "resolve: {:?}; first fetch: {:?}, {} bytes, {} objects",
        resolve_time, stats.duration, stats.bytes, stats.objects
    );

    let started = Instant::now();
    let tree = cache.tree(&source, &first).unwrap();
    let files = support::snapshot(&tree);
    let bytes: usize = files.values().map(Vec::len).sum();
    println!(
        "tree read: {:?} for {} files, {bytes} bytes",
        started.elapsed(),
        files.len()
    );

    for i in 0..10 {
        remote.write(
            &format!("dir{:02}/file{i:04}.yaml", i % 50),
            &format!("changed: {i}\n"),
        );
    }
    let second = remote.commit("10 files changed");
    let stats = cache.fetch(&source, &second).unwrap();
    println!(
        "incremental fetch: {:?}, {} bytes, {} objects",
        stats.duration, stats.bytes, stats.objects
    );
    let stats = cache.fetch(&source, &second).unwrap();
    println!("cached fetch (no-op): {:?}", stats.duration);
}
