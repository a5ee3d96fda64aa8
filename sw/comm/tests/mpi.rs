//! The MPI transport under `mpirun -np 2` (with `--features mpi`): the smoke example's
//! collectives pass on both ranks. `scripts/mpi-smoke.sh` also checks the failures.
#![cfg(feature = "mpi")]

use std::path::PathBuf;
use std::process::Command;

// The example's aggregation, so that both transports run the very same computation.
#[path = "../examples/mpi_smoke.rs"]
#[allow(dead_code)]
mod smoke;

/// target/<profile>/examples/mpi_smoke, built by `cargo test` beside this test's binary.
fn smoke_example() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>");
    profile_dir.join("examples").join("mpi_smoke")
}

#[test]
fn two_ranks_under_mpirun() {
    let smoke = smoke_example();
    assert!(smoke.exists(), "{} was not built", smoke.display());
    let out = Command::new("timeout")
        .args(["60", "mpirun", "-np", "2"])
        .arg(&smoke)
        // Containers: root, no cross-memory attach, maybe fewer cores than ranks (docs/dist.md).
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .output()
        .expect("mpirun (Debian: openmpi-bin; scripts/setup.sh installs it)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // The same aggregation with the local transport gives the same words on every rank.
    let digests: Vec<u64> = std::thread::scope(|s| {
        let hs: Vec<_> = lpgen_comm::local(2)
            .into_iter()
            .map(|mut t| s.spawn(move || smoke::aggregation_digest(&mut t).unwrap()))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(digests[0], digests[1]);
    for rank in 0..2 {
        let line = format!("rank {rank} of 2 ok");
        assert!(stdout.contains(&line), "{stdout}");
        let digest = format!("1-bit aggregation {:#018x}", digests[0]);
        assert!(
            stdout
                .lines()
                .any(|l| l.contains(&line) && l.contains(&digest)),
            "{stdout}"
        );
    }
}
