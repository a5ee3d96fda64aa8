//! `lpgen train --format dfix:P:U` and `--format store:P/U` (seed 002's low-precision
//! storage): the widths or float formats and the options that go with them, checked in one
//! line each.

use lpgen_golden::dfix::DfixFormat;
use lpgen_train::storage::{DfixConfig, FloatConfig, StorageConfig};

use super::{bad, TrainArgs};
use crate::CliResult;

/// Seed 002's storage of `--format dfix:P:U` (or dfix:W for P = U = W) with its options, or
/// of `--format store:P/U` (or store:F).
pub(super) fn storage(a: &TrainArgs) -> CliResult<Option<StorageConfig>> {
    let format = a.format.as_deref().map(str::trim);
    let dfix_options = a.scale_every.is_some()
        || a.max_overflow.is_some()
        || a.radix_point.is_some()
        || a.dfix_products.is_some();
    if let Some(spec) = format.and_then(|f| f.strip_prefix("store:")) {
        if dfix_options {
            return Err(bad(
                "--scale-every, --max-overflow, --radix-point and --dfix-products apply to --format dfix:P:U, not float storage".into(),
            ));
        }
        if a.backend == "rtl" {
            return Err(bad(
                "float storage computes in f32 and rounds as it stores: train it on --backend f32 or golden".into(),
            ));
        }
        return Ok(Some(StorageConfig::Float(FloatConfig::parse(spec)?)));
    }
    let Some(spec) = format.and_then(|f| f.strip_prefix("dfix:")) else {
        if dfix_options
            || a.max_overflow.is_some()
            || a.radix_point.is_some()
            || a.dfix_products.is_some()
        {
            return Err(bad(
                "--scale-every, --max-overflow, --radix-point and --dfix-products apply to --format dfix:P:U".into(),
            ));
        }
        return Ok(None);
    };
    let widths: Vec<Option<u32>> = spec.split(':').map(|w| w.parse().ok()).collect();
    let (p, u) = match widths[..] {
        [Some(w)] => (w, w),
        [Some(p), Some(u)] => (p, u),
        _ => {
            return Err(bad(format!(
                "format 'dfix:{spec}' is not dfix:P:U with whole widths (e.g. dfix:10:12: 10-bit propagations, 12-bit updates)"
            )))
        }
    };
    let width = |w: u32| -> CliResult<DfixFormat> {
        DfixFormat::new(w).map_err(|_| {
            bad(format!(
                "format 'dfix:{spec}': each width (sign included) must be 2..={} (e.g. dfix:10:12)",
                lpgen_golden::dfix::MAX_WIDTH
            ))
        })
    };
    let (propagation, update) = (width(p)?, width(u)?);
    let scale_every = a.scale_every.unwrap_or(10_000);
    if scale_every == 0 {
        return Err(bad(
            "--scale-every 0: give the training examples between scale updates (seed 002: 10000)"
                .into(),
        ));
    }
    let max_overflow = a.max_overflow.unwrap_or(1e-4);
    if !(max_overflow > 0.0 && max_overflow < 1.0) {
        return Err(bad(format!(
            "--max-overflow {max_overflow} is not a rate in (0, 1) (seed 002: 0.0001)"
        )));
    }
    if let Some(r) = a.radix_point {
        if r >= p.min(u) {
            return Err(bad(format!(
                "--radix-point {r}: a {}-bit word has {} bits besides its sign; give fewer integer bits",
                p.min(u),
                p.min(u) - 1
            )));
        }
        if a.scale_every.is_some() || a.max_overflow.is_some() {
            return Err(bad(
                "--radix-point fixes every scale: --scale-every and --max-overflow do not apply"
                    .into(),
            ));
        }
    }
    let exact_products = match a.dfix_products.as_deref() {
        None | Some("f32") => false,
        Some("exact") => true,
        Some(other) => {
            return Err(bad(format!(
                "--dfix-products {other:?}: expected f32 or exact"
            )))
        }
    };
    if a.backend == "rtl" && !exact_products {
        return Err(bad(
            "on --backend rtl the products run on the dfix array: add --dfix-products exact (f32 products train on --backend f32 or golden)"
                .into(),
        ));
    }
    if exact_products && p > u {
        return Err(bad(format!(
            "--dfix-products exact multiplies P-bit words: the propagation width {p} must not exceed the update width {u}"
        )));
    }
    if exact_products && a.model == "lenet5" {
        return Err(bad(
            "--dfix-products exact applies to dense layers (--model mlp or maxout); LeNet-5's convolutions would stay f32"
                .into(),
        ));
    }
    Ok(Some(StorageConfig::Dfix(DfixConfig {
        propagation,
        update,
        scale_every,
        max_overflow,
        radix_point: a.radix_point,
        exact_products,
    })))
}
