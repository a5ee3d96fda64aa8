//! What `lpgen train` and `lpgen cosim` share to run on several ranks: the `--dist` choice
//! and this process's MPI rank.

use crate::{CliError, CliResult};

/// Data-parallel workers or co-simulation ranks: threads of one process, or more than 64 on a
/// machine of a few cores only multiplies memory.
pub const MAX_WORKERS: usize = 64;

/// `--dist local` (false) or `--dist mpi` (true), checked against `--workers`.
pub fn is_mpi(dist: &str, workers: usize) -> CliResult<bool> {
    match dist {
        "local" => Ok(false),
        "mpi" if workers > 1 => Err(CliError(
            "--dist mpi takes its workers from mpirun -np K, not --workers".into(),
        )),
        "mpi" => Ok(true),
        other => Err(CliError(format!(
            "unknown --dist {other:?}: expected local or mpi"
        ))),
    }
}

/// Checks `--workers` (threads of this process).
pub fn check_workers(workers: usize) -> CliResult {
    if !(1..=MAX_WORKERS).contains(&workers) {
        return Err(CliError(format!(
            "--workers {workers} is out of range: give 1..={MAX_WORKERS} (threads of this process)"
        )));
    }
    Ok(())
}

/// This process's rank of an `mpirun` job.
#[cfg(feature = "mpi")]
pub fn mpi_transport() -> CliResult<Box<dyn lpgen_comm::Transport + Send>> {
    Ok(Box::new(
        lpgen_comm::mpi::init().map_err(|e| CliError(e.to_string()))?,
    ))
}

#[cfg(not(feature = "mpi"))]
pub fn mpi_transport() -> CliResult<Box<dyn lpgen_comm::Transport + Send>> {
    Err(CliError(
        "this lpgen was built without MPI: build it with `cargo build --release -p lpgen --features mpi` (docs/dist.md)"
            .into(),
    ))
}
