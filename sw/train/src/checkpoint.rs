//! Checkpoints: the whole state of a run at an epoch boundary, written atomically, read back
//! only if complete (a digest over the contents ends the file) and made by the same
//! configuration.
//!
//! Text: a `lpgen-checkpoint 2` line, the configuration's fingerprint, the run state (since
//! issue 46 with the model's update count; a line without it reads as 0), the metrics history (JSON lines), then every array of the model as hex words, and finally
//! `end <fnv1a64 of everything before>`.

use std::path::Path;

use crate::config::Stages;
use crate::machine::{Mat, Word};
use crate::model::{Model, Params};
use crate::rounding::Stream;
use crate::scaling::{Scales, Scaling};
use crate::storage::Storage;
use crate::trainer::EpochMetrics;
use crate::TrainError;

/// The state of a run after `epochs_done` epochs.
#[derive(Clone, Debug, PartialEq)]
pub struct State<W = u64> {
    pub epochs_done: u32,
    pub lr: f64,
    /// The halving schedule has started.
    pub halving: bool,
    /// The previous epoch's test cross-entropy.
    pub prev_ce: Option<f64>,
    /// The metrics of every finished epoch.
    pub history: Vec<EpochMetrics>,
    pub model: Model<W>,
    /// `--format dfix:P:U`: the groups' scales and overflow counts.
    pub storage: Option<Storage>,
    /// `--rounding stochastic:R`: where the rounding stream stands.
    pub stream: Option<Stream>,
    /// `--scaling`: the delayed rules' amax histories.
    pub scales: Option<crate::scaling::Scales>,
}

const MAGIC: &str = "lpgen-checkpoint 2";

/// FNV-1a, 64 bits: the checkpoint's digest, and the name of the data it was trained on.
pub(crate) fn fnv1a64(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn words<W: Word>(out: &mut String, name: &str, w: &[W]) {
    out.push_str(&format!("{name} {}\n", w.len()));
    for chunk in w.chunks(32) {
        let line: Vec<String> = chunk.iter().map(|v| format!("{:x}", v.to_bits())).collect();
        out.push_str(&line.join(" "));
        out.push('\n');
    }
}

/// Writes `state` of the run with `fingerprint` to `path` (a temporary file, then a rename).
pub fn save<W: Word>(path: &Path, fingerprint: &str, s: &State<W>) -> Result<(), TrainError> {
    let mut out = format!("{MAGIC}\n{fingerprint}\n");
    out.push_str(&format!(
        "epochs {} lr {:x} halving {} prev_ce {} updates {}\n",
        s.epochs_done,
        s.lr.to_bits(),
        s.halving as u8,
        s.prev_ce
            .map_or("-".into(), |c| format!("{:x}", c.to_bits())),
        s.model.updates
    ));
    out.push_str(&format!("history {}\n", s.history.len()));
    for h in &s.history {
        out.push_str(&h.json());
        out.push('\n');
    }
    out.push_str(&format!("layers {}\n", s.model.layers.len()));
    for l in &s.model.layers {
        out.push_str(&format!("shape {} {}\n", l.w.rows, l.w.cols));
        for (name, w) in [
            ("w", &l.w.data),
            ("b", &l.b),
            ("vw", &l.vw),
            ("vb", &l.vb),
            ("rw", &l.rw),
            ("rb", &l.rb),
            ("cw", &l.cw),
            ("cb", &l.cb),
        ] {
            words(&mut out, name, w);
        }
    }
    if let Some(storage) = &s.storage {
        out.push_str(&format!("storage {}\n", storage.save()));
    }
    if let Some(stream) = &s.stream {
        out.push_str(&format!("rounding {}\n", stream.save()));
    }
    if let Some(scales) = &s.scales {
        out.push_str(&format!("scales {}\n", scales.save()));
    }
    let digest = fnv1a64(out.bytes());
    out.push_str(&format!("end {digest:016x}\n"));
    lpgen_tempfiles::write_atomic(path, out.as_bytes())
        .map_err(|e| TrainError(format!("cannot write checkpoint {}: {e}", path.display())))
}

/// The contents of a checkpoint file before its `end` line, if the digest there matches them.
pub fn verified(path: &Path) -> Result<String, TrainError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| TrainError(format!("cannot read checkpoint {}: {e}", path.display())))?;
    let bad = |why: &str| TrainError(format!("checkpoint {} is unusable: {why}", path.display()));
    let body_end = text
        .trim_end_matches('\n')
        .rfind('\n')
        .map(|i| i + 1)
        .ok_or_else(|| bad("truncated"))?;
    let (body, last) = text.split_at(body_end);
    let want = format!("end {:016x}", fnv1a64(body.bytes()));
    if last.trim_end() != want {
        return Err(bad("truncated or corrupt (digest mismatch)"));
    }
    let mut body = text;
    body.truncate(body_end);
    Ok(body)
}

const WORKER_MAGIC: &str = "lpgen-worker-state 1";

/// Writes a data-parallel worker's own state after `epochs_done` epochs (its error-feedback
/// residuals and AdaGrad squares, which the model does not hold) to `path`, atomically:
/// `lpgen-worker-state 1`, the run's fingerprint, `epochs E rank R`, the arrays as hex words,
/// and the digest line of a checkpoint.
pub fn save_worker(
    path: &Path,
    fingerprint: &str,
    epochs_done: u32,
    rank: usize,
    arrays: &[Vec<u64>],
) -> Result<(), TrainError> {
    let mut out = format!(
        "{WORKER_MAGIC}\n{fingerprint}\nepochs {epochs_done} rank {rank}\narrays {}\n",
        arrays.len()
    );
    for a in arrays {
        words(&mut out, "a", a);
    }
    let digest = fnv1a64(out.bytes());
    out.push_str(&format!("end {digest:016x}\n"));
    lpgen_tempfiles::write_atomic(path, out.as_bytes())
        .map_err(|e| TrainError(format!("cannot write worker state {}: {e}", path.display())))
}

/// Reads the state [`save_worker`] wrote for the same run, epoch and rank; no array may
/// exceed `max_words` (the model's largest, checked before it is allocated).
pub fn load_worker(
    path: &Path,
    fingerprint: &str,
    epochs_done: u32,
    rank: usize,
    max_words: usize,
) -> Result<Vec<Vec<u64>>, TrainError> {
    let text = verified(path)?;
    let bad = |why: &str| {
        TrainError(format!(
            "worker state {} is unusable: {why}",
            path.display()
        ))
    };
    let mut lines = text.lines();
    let mut next = || lines.next().ok_or_else(|| bad("truncated"));
    if next()? != WORKER_MAGIC {
        return Err(bad("not an lpgen worker state"));
    }
    if next()? != fingerprint {
        return Err(bad("made by another configuration"));
    }
    let want = format!("epochs {epochs_done} rank {rank}");
    let got = next()?;
    if got != want {
        return Err(bad(&format!(
            "it holds {got:?}, the checkpoint needs {want:?}"
        )));
    }
    let count: usize = next()?
        .strip_prefix("arrays ")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| bad("expected 'arrays'"))?;
    let mut arrays = vec![];
    for _ in 0..count.min(1 << 16) {
        let n: usize = next()?
            .strip_prefix("a ")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| bad("expected an array"))?;
        if n > max_words {
            return Err(bad(&format!(
                "an array of {n} words, the model's largest has {max_words}"
            )));
        }
        let mut v = Vec::with_capacity(n);
        while v.len() < n {
            for h in next()?.split(' ') {
                v.push(u64::from_str_radix(h, 16).map_err(|_| bad("bad number"))?);
            }
        }
        if v.len() != n {
            return Err(bad("array length"));
        }
        arrays.push(v);
    }
    if arrays.len() != count {
        return Err(bad("too many arrays"));
    }
    Ok(arrays)
}

/// Reads a checkpoint made with `fingerprint`, whose model must have the layer shapes of
/// `template` (checked before any array is allocated); a run with `storage` restores its
/// scales into it, a run with a rounding `stream` where that stood.
pub fn load<W: Word>(
    path: &Path,
    fingerprint: &str,
    template: &Model<W>,
    storage: Option<Storage>,
    (stream, scaling): (Option<Stream>, Option<(Scaling, Stages)>),
) -> Result<State<W>, TrainError> {
    let text = verified(path)?;
    parse(
        path,
        &text,
        fingerprint,
        template,
        (storage, stream, scaling),
    )
}

/// [`load`] of `text`, the verified contents ([`verified`]) of the checkpoint at `path`.
pub fn parse<W: Word>(
    path: &Path,
    text: &str,
    fingerprint: &str,
    template: &Model<W>,
    (mut storage, mut stream, scaling): (
        Option<Storage>,
        Option<Stream>,
        Option<(Scaling, Stages)>,
    ),
) -> Result<State<W>, TrainError> {
    let mut r = Reader {
        path,
        lines: text.lines(),
    };
    match r.next()? {
        MAGIC => {}
        // Format 1 had no AdaGrad/RMSProp state of its own (`rw`/`rb`).
        other if other.starts_with("lpgen-checkpoint ") => {
            return Err(r.bad(&format!(
                "written in format {:?}, this lpgen reads {MAGIC:?}; start afresh",
                other.trim_start_matches("lpgen-checkpoint ")
            )))
        }
        _ => return Err(r.bad("not an lpgen checkpoint")),
    }
    let fp = r.next()?;
    if fp != fingerprint {
        return Err(TrainError(format!(
            "checkpoint {} was made by another configuration ({fp}); resume with the same options or start afresh",
            path.display()
        )));
    }
    let st: Vec<&str> = r.next()?.split(' ').collect();
    // Checkpoints written before issue 46 end the line at prev_ce: no update was counted
    // (SGD, AdaGrad and RMSProp do not read the count).
    if !(st.len() == 8 || st.len() == 10 && st[8] == "updates") || st[0] != "epochs" {
        return Err(r.bad("bad state line"));
    }
    let updates = match st.get(9) {
        Some(n) => n.parse().map_err(|_| r.bad("bad update count"))?,
        None => 0,
    };
    let epochs_done = st[1].parse().map_err(|_| r.bad("bad epoch count"))?;
    let lr = f64::from_bits(r.num(Some(st[3]))?);
    if !(lr.is_finite() && lr > 0.0) {
        return Err(r.bad(&format!("learning rate {lr} is not a positive number")));
    }
    let halving = st[5] == "1";
    let prev_ce = match st[7] {
        "-" => None,
        h => Some(f64::from_bits(r.num(Some(h))?)),
    };
    let nh = r.count("history ")?;
    let mut history = vec![];
    for _ in 0..nh {
        history.push(EpochMetrics::from_json(r.next()?).map_err(|e| r.bad(&e.0))?);
    }
    let nl = r.count("layers ")?;
    if nl != template.layers.len() {
        return Err(r.bad(&format!(
            "{nl} layers, the configuration has {}",
            template.layers.len()
        )));
    }
    let layers = (template.layers.iter())
        .map(|want| r.layer(want))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(storage) = &mut storage {
        let line = r.next()?;
        storage.restore(
            line.strip_prefix("storage ")
                .ok_or_else(|| r.bad("expected 'storage'"))?,
        )?;
    }
    if let Some(stream) = &mut stream {
        let line = r.next()?;
        stream.restore(
            line.strip_prefix("rounding ")
                .ok_or_else(|| r.bad("expected 'rounding'"))?,
        )?;
    }
    let scales = match scaling {
        Some((scaling, stages)) => {
            let line = r.next()?;
            let fields = line
                .strip_prefix("scales ")
                .ok_or_else(|| r.bad("expected 'scales'"))?;
            Some(Scales::restore(fields, &scaling, &stages).map_err(|e| r.bad(&e.0))?)
        }
        None => None,
    };
    Ok(State {
        epochs_done,
        lr,
        halving,
        prev_ce,
        history,
        model: Model { layers, updates },
        storage,
        stream,
        scales,
    })
}

/// A checkpoint's lines as [`parse`] reads them, and its refusals.
struct Reader<'a> {
    path: &'a Path,
    lines: std::str::Lines<'a>,
}

impl<'a> Reader<'a> {
    fn bad(&self, why: &str) -> TrainError {
        TrainError(format!(
            "checkpoint {} is unusable: {why}",
            self.path.display()
        ))
    }

    fn next(&mut self) -> Result<&'a str, TrainError> {
        self.lines.next().ok_or_else(|| self.bad("truncated"))
    }

    /// A hex number of a line.
    fn num(&self, s: Option<&str>) -> Result<u64, TrainError> {
        u64::from_str_radix(s.ok_or_else(|| self.bad("short line"))?, 16)
            .map_err(|_| self.bad("bad number"))
    }

    /// The count of the next line, `KEY N`.
    fn count(&mut self, key: &str) -> Result<usize, TrainError> {
        let line = self.next()?;
        line.strip_prefix(key)
            .and_then(|n| n.trim().parse().ok())
            .ok_or_else(|| self.bad(&format!("expected '{key}'")))
    }

    /// One layer's parameters and optimizer state, of `want`'s shape.
    fn layer<W: Word>(&mut self, want: &Params<W>) -> Result<Params<W>, TrainError> {
        let shape: Vec<usize> = self
            .next()?
            .strip_prefix("shape ")
            .ok_or_else(|| self.bad("expected 'shape'"))?
            .split(' ')
            .map(|v| v.parse().map_err(|_| self.bad("bad shape")))
            .collect::<Result<_, _>>()?;
        if shape != [want.w.rows, want.w.cols] {
            return Err(self.bad(&format!(
                "a layer of shape {shape:?}, the configuration has [{}, {}]",
                want.w.rows, want.w.cols
            )));
        }
        let mut arrays = vec![];
        for (name, len) in [
            ("w", want.w.data.len()),
            ("b", want.b.len()),
            ("vw", want.vw.len()),
            ("vb", want.vb.len()),
            ("rw", want.rw.len()),
            ("rb", want.rb.len()),
            ("cw", want.cw.len()),
            ("cb", want.cb.len()),
        ] {
            let n = self.count(&format!("{name} "))?;
            if n != len {
                return Err(self.bad(&format!("array {name} of {n} words, expected {len}")));
            }
            let mut v = Vec::with_capacity(n);
            while v.len() < n {
                for h in self.next()?.split(' ') {
                    v.push(W::from_bits(self.num(Some(h))?));
                }
            }
            if v.len() != n {
                return Err(self.bad("array length"));
            }
            arrays.push(v);
        }
        let mut it = arrays.into_iter();
        let mut take = || it.next().unwrap();
        Ok(Params {
            w: Mat {
                rows: shape[0],
                cols: shape[1],
                data: take(),
            },
            b: take(),
            vw: take(),
            vb: take(),
            rw: take(),
            rb: take(),
            cw: take(),
            cb: take(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_damage_or_another_configuration() {
        let layer = Params {
            w: Mat {
                rows: 2,
                cols: 3,
                data: vec![1, 2, 3, 4, 5, 0xffff_ffff],
            },
            b: vec![7, 8],
            vw: vec![0; 6],
            vb: vec![9, 10],
            rw: vec![12; 6],
            rb: vec![],
            cw: vec![11; 6],
            cb: vec![0, 1],
        };
        let s = State {
            epochs_done: 3,
            lr: 0.05,
            halving: true,
            prev_ce: Some(0.25),
            history: vec![serde_json::from_str(
                r#"{"epoch": 1, "backend": "golden", "lr": 0.1, "steps": 3, "train_loss": 2.5,
                "train_acc": 0.1, "test_loss": 2.4, "test_acc": 0.2, "seconds": 1.0,
                "samples_per_s": 60.0}"#,
            )
            .unwrap()],
            model: Model {
                layers: vec![layer.clone(), layer],
                updates: 17,
            },
            storage: None,
            stream: None,
            scales: None,
        };
        let dir = std::env::temp_dir().join(format!("lpgen-ck-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("run.lpck");
        save(&p, "cfg A", &s).unwrap();
        let template = &s.model;
        assert_eq!(load(&p, "cfg A", template, None, (None, None)).unwrap(), s);
        let e = load(&p, "cfg B", template, None, (None, None))
            .unwrap_err()
            .0;
        assert!(e.contains("another configuration"), "{e}");
        let text = std::fs::read_to_string(&p).unwrap();
        // Damage behind a digest recomputed to match: caught by the shape checks.
        let redigest = |body: &str| {
            let body = &body[..body.rfind("end ").unwrap()];
            format!("{body}end {:016x}\n", fnv1a64(body.bytes()))
        };
        for (from, to, why) in [
            ("layers 2\n", "layers 0\n", "0 layers"),
            (
                "\nw 6\n",
                "\nw 4000000000000\n",
                "array w of 4000000000000 words",
            ),
            ("shape 2 3\n", "shape 9 3\n", "shape [9, 3]"),
            (
                "lpgen-checkpoint 2\n",
                "lpgen-checkpoint 1\n",
                "format \"1\", this lpgen reads",
            ),
        ] {
            std::fs::write(&p, redigest(&text.replacen(from, to, 1))).unwrap();
            let e = load(&p, "cfg A", template, None, (None, None))
                .unwrap_err()
                .0;
            assert!(e.contains(why), "{from:?}: {e}");
        }
        // A checkpoint from before issue 46 (no update count on its state line) still loads,
        // with no update counted; its moments are the arrays it has.
        std::fs::write(&p, redigest(&text.replacen(" updates 17\n", "\n", 1))).unwrap();
        let old = load(&p, "cfg A", template, None, (None, None)).unwrap();
        assert_eq!(old.model.updates, 0);
        assert_eq!(old.model.layers, s.model.layers);
        let nan_lr = text.replacen(
            &format!("lr {:x}", 0.05f64.to_bits()),
            "lr 7ff8000000000000",
            1,
        );
        std::fs::write(&p, redigest(&nan_lr)).unwrap();
        let e = load(&p, "cfg A", template, None, (None, None))
            .unwrap_err()
            .0;
        assert!(e.contains("learning rate NaN"), "{e}");
        std::fs::write(&p, &text[..text.len() / 2]).unwrap();
        assert!(load(&p, "cfg A", template, None, (None, None))
            .unwrap_err()
            .0
            .contains("unusable"));
        std::fs::write(
            &p,
            text.replacen("\n5 ", "\n6 ", 1).replacen(" 5 ", " 6 ", 1),
        )
        .unwrap();
        assert!(load(&p, "cfg A", template, None, (None, None))
            .unwrap_err()
            .0
            .contains("digest"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
