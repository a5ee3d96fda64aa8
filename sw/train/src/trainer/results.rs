//! The files a run writes after each epoch besides its checkpoint: metrics, plot, scales.

use super::*;

/// The plot's title: format (or per-stage precision), backend, network and optimizer.
pub(super) fn plot_title(cfg: &Config, backend: &str) -> String {
    let quire = if cfg.quire { " with quires" } else { "" };
    let optimizer = match cfg.optimizer {
        Optimizer::Sgd => "",
        Optimizer::AdaGrad { .. } => ", AdaGrad",
        Optimizer::RmsProp { .. } => ", RMSProp",
        Optimizer::Adam {
            decoupled: false, ..
        } => ", Adam",
        Optimizer::Adam {
            decoupled: true, ..
        } => ", AdamW",
    };
    let format = match cfg.storage {
        Some(s) => s.describe(),
        None => cfg.stages.describe(),
    };
    format!(
        "{format}{quire}, {backend} backend, {}{optimizer}",
        cfg.arch.name
    )
}

/// metrics.jsonl and plot.png from the history.
pub(super) fn write_results(
    plan: &Plan,
    title: &str,
    history: &[EpochMetrics],
) -> Result<(), TrainError> {
    let path = plan.out.join("metrics.jsonl");
    let text: String = history.iter().map(|h| h.json() + "\n").collect();
    lpgen_tempfiles::write_atomic(&path, text.as_bytes())
        .map_err(|e| TrainError(format!("cannot write {}: {e}", path.display())))?;
    let col = |f: fn(&EpochMetrics) -> f64| history.iter().map(f).collect::<Vec<f64>>();
    plot::write(
        &plan.out.join("plot.png"),
        &plot::Series {
            title: title.to_string(),
            train_loss: col(|m| m.train_loss),
            test_loss: col(|m| m.test_loss),
            train_acc: col(|m| m.train_acc),
            test_acc: col(|m| m.test_acc),
        },
    )?;
    if history.iter().any(|m| m.scales.is_some()) {
        write_scales(&plan.out.join("scales.png"), title, history)?;
    }
    Ok(())
}

/// scales.png: every group's scale exponent at each epoch's end, one panel per layer.
pub(super) fn write_scales(
    path: &Path,
    title: &str,
    history: &[EpochMetrics],
) -> Result<(), TrainError> {
    let mut layers: BTreeMap<String, Vec<Line>> = BTreeMap::new();
    for m in history {
        for (name, &scale) in m.scales.iter().flatten() {
            let (layer, role) = name.split_once('.').unwrap_or((name, ""));
            let lines = layers.entry(layer.to_string()).or_default();
            let point = (m.epoch as f64, scale as f64);
            match lines.iter_mut().find(|l| l.name == role) {
                Some(l) => l.points.push(point),
                None => lines.push(Line::new(role, vec![point])),
            }
        }
    }
    let panels: Vec<Panel> = layers
        .into_iter()
        .map(|(layer, lines)| {
            Panel::new(
                &format!("layer {}", layer.trim_start_matches('L')),
                "epoch",
                "scale exponent e (a word is int·2^e)",
                lines,
            )
        })
        .collect();
    chart::write(path, &format!("scales: {title}"), &panels)
}
