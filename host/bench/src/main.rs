//! `dsh-fs-bench`: the figures behind the performance claims, each against a
//! baseline measured in the same run (these machines are noisy; ratios are
//! what to compare). Prints; asserts nothing.

mod bench;

use clap::Parser;
use std::path::PathBuf;

/// Measure reads, paging, edits, the call loop, discovery and cold start
/// against baselines.
#[derive(Parser)]
#[command(name = "dsh-fs-bench", version)]
struct Args {
    /// Directory for the generated files (kept between runs).
    #[arg(long, default_value_os_t = std::env::temp_dir().join("dsh-fs-bench"))]
    dir: PathBuf,
    /// Repetitions per figure.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Largest file in MiB: 1024 measures 1 MiB, 100 MiB and 1 GiB.
    #[arg(long, default_value_t = 1024)]
    max_mib: u64,
    /// Calls in the small-file read loop.
    #[arg(long, default_value_t = 10_000)]
    calls: usize,
    /// Files in the tree glob and grep walk (0 skips those figures).
    #[arg(long, default_value_t = 120_000)]
    search_files: usize,
    /// Measure only an edit of one line in a large object of this store
    /// (`s3://BUCKET/PREFIX`; the bucket must exist), against uploading it.
    #[arg(long)]
    store: Option<String>,
    /// Measure only the change journal: `changes` and `revert` over 6,000
    /// files and 40,000 changes, and `serve`'s memory through 36,500 writes
    /// at a long path.
    #[arg(long, conflicts_with = "store")]
    journal: bool,
    /// The store's endpoint, e.g. `http://127.0.0.1:5000` for moto.
    #[arg(long, requires = "store")]
    endpoint: Option<String>,
    /// Size of the object in MiB for `--store`.
    #[arg(long, default_value_t = 1024)]
    store_mib: u64,
    /// The Node.js whose run of the npm package (`host/js`, built) the
    /// host-path figures include; skipped when it cannot run it.
    #[arg(long, default_value = "node")]
    node: PathBuf,
    /// The Python whose wheel (`dsh_fs`) the host-path figures include;
    /// skipped when it has none.
    #[arg(long, default_value = "python3")]
    python: PathBuf,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    bench::run(&bench::BenchOptions {
        dir: args.dir,
        reps: args.reps,
        max_mib: args.max_mib,
        calls: args.calls,
        search_files: args.search_files,
        store: args.store.map(|url| bench::StoreBench {
            url,
            endpoint: args.endpoint,
            mib: args.store_mib,
        }),
        journal: args.journal,
        node: args.node,
        python: args.python,
    })
}
