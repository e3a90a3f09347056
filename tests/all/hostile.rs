//! A hostile component (tests/hostile) against the host's limits: each
//! attack is stopped, and another session keeps being served meanwhile.

use dsh_fs::{Limits, MemoryProvider, Runtime, SessionOptions};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Builds tests/hostile for wasm32-wasip2 (once per test run).
fn hostile_component() -> Vec<u8> {
    let workspace = crate::workspace();
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hostile");
    let status = Command::new(env!("CARGO"))
        .current_dir(workspace.join("tests/hostile"))
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .unwrap();
    assert!(status.success(), "building tests/hostile failed");
    std::fs::read(target.join("wasm32-wasip2/release/dsh_fs_hostile.wasm")).unwrap()
}

#[test]
fn the_host_stops_every_attack_and_keeps_serving() {
    let runtime = Runtime::builder()
        .component(hostile_component())
        .cache_dir(Some(crate::cache_dir()))
        .limits(Limits {
            call_timeout: Duration::from_millis(500),
            memory_bytes: 64 << 20,
            ..Limits::default()
        })
        .build()
        .unwrap();
    let provider = Arc::new(MemoryProvider::default());
    provider.store().insert("a.txt", "a\n");
    let mut attacker = runtime
        .session(provider.clone(), SessionOptions::default())
        .unwrap();
    let mut bystander = runtime
        .session(provider, SessionOptions::default())
        .unwrap();

    // The bystander calls continuously on its own thread while the attacks run.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let served = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let r = bystander.execute("echo", "{}");
                assert_eq!(r.text, "echo {}");
                n += 1;
            }
            n
        })
    };

    for (attack, code, bound) in [
        ("spin", "TIMEOUT", Duration::from_secs(5)),
        ("eat-memory", "INTERNAL_ERROR", Duration::from_secs(20)),
        ("huge-result", "INTERNAL_ERROR", Duration::from_secs(20)),
        ("hoard-targets", "INTERNAL_ERROR", Duration::from_secs(20)),
        ("panic", "INTERNAL_ERROR", Duration::from_secs(5)),
    ] {
        let started = Instant::now();
        let r = attacker.execute(attack, "{}");
        let took = started.elapsed();
        assert!(
            r.is_error,
            "{attack} was not stopped: {}",
            &r.text[..r.text.len().min(100)]
        );
        assert_eq!(r.error.as_ref().unwrap().code, code, "{attack}: {}", r.text);
        assert!(took < bound, "{attack} took {took:?}");
        eprintln!("{attack}: stopped after {took:?}: {}", r.text);
        // The attacker's session is usable again right away.
        assert_eq!(attacker.execute("echo", "{}").text, "echo {}");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let n = served.join().unwrap();
    assert!(n > 0, "the other session was starved");
}
