//! The MPI transport under `mpirun -np 2` (with `--features mpi`): the smoke example's
//! collectives pass on both ranks. `scripts/mpi-smoke.sh` also checks the failures.
#![cfg(feature = "mpi")]

use std::path::PathBuf;
use std::process::Command;

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
    for rank in 0..2 {
        assert!(stdout.contains(&format!("rank {rank} of 2 ok")), "{stdout}");
    }
}
