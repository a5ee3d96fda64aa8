//! Checkpoints: the whole state of a run at an epoch boundary, written atomically, read back
//! only if complete (a digest over the contents ends the file) and made by the same
//! configuration.
//!
//! Text: a `lpgen-checkpoint 1` line, the configuration's fingerprint, the run state, the
//! metrics history (JSON lines), then every array of the model as hex words, and finally
//! `end <fnv1a64 of everything before>`.

use std::io::Write;
use std::path::Path;

use crate::machine::Mat;
use crate::mlp::{Layer, Model};
use crate::TrainError;

/// The state of a run after `epochs_done` epochs.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub epochs_done: u32,
    pub lr: f64,
    /// The halving schedule has started.
    pub halving: bool,
    /// The previous epoch's test cross-entropy.
    pub prev_ce: Option<f64>,
    /// One JSON object per finished epoch.
    pub history: Vec<String>,
    pub model: Model,
}

const MAGIC: &str = "lpgen-checkpoint 1";

fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn words(out: &mut String, name: &str, w: &[u64]) {
    out.push_str(&format!("{name} {}\n", w.len()));
    for chunk in w.chunks(32) {
        let line: Vec<String> = chunk.iter().map(|v| format!("{v:x}")).collect();
        out.push_str(&line.join(" "));
        out.push('\n');
    }
}

/// Writes `state` of the run with `fingerprint` to `path` (a temporary file, then a rename).
pub fn save(path: &Path, fingerprint: &str, s: &State) -> Result<(), TrainError> {
    let mut out = format!("{MAGIC}\n{fingerprint}\n");
    out.push_str(&format!(
        "epochs {} lr {:x} halving {} prev_ce {}\n",
        s.epochs_done,
        s.lr.to_bits(),
        s.halving as u8,
        s.prev_ce
            .map_or("-".into(), |c| format!("{:x}", c.to_bits()))
    ));
    out.push_str(&format!("history {}\n", s.history.len()));
    for h in &s.history {
        out.push_str(h);
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
            ("cw", &l.cw),
            ("cb", &l.cb),
        ] {
            words(&mut out, name, w);
        }
    }
    let digest = fnv1a64(out.as_bytes());
    out.push_str(&format!("end {digest:016x}\n"));
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let res = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(out.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    res.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        TrainError(format!("cannot write checkpoint {}: {e}", path.display()))
    })
}

/// Reads a checkpoint made with `fingerprint`.
pub fn load(path: &Path, fingerprint: &str) -> Result<State, TrainError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| TrainError(format!("cannot read checkpoint {}: {e}", path.display())))?;
    let bad = |why: &str| TrainError(format!("checkpoint {} is unusable: {why}", path.display()));
    let body_end = text
        .trim_end_matches('\n')
        .rfind('\n')
        .map(|i| i + 1)
        .ok_or_else(|| bad("truncated"))?;
    let (body, last) = text.split_at(body_end);
    let want = format!("end {:016x}", fnv1a64(body.as_bytes()));
    if last.trim_end() != want {
        return Err(bad("truncated or corrupt (digest mismatch)"));
    }
    let mut lines = body.lines();
    let mut next = || lines.next().ok_or_else(|| bad("truncated"));
    if next()? != MAGIC {
        return Err(bad("not an lpgen checkpoint"));
    }
    let fp = next()?;
    if fp != fingerprint {
        return Err(TrainError(format!(
            "checkpoint {} was made by another configuration ({fp}); resume with the same options or start afresh",
            path.display()
        )));
    }
    let num = |s: Option<&str>| -> Result<u64, TrainError> {
        u64::from_str_radix(s.ok_or_else(|| bad("short line"))?, 16).map_err(|_| bad("bad number"))
    };
    let st: Vec<&str> = next()?.split(' ').collect();
    if st.len() != 8 || st[0] != "epochs" {
        return Err(bad("bad state line"));
    }
    let epochs_done = st[1].parse().map_err(|_| bad("bad epoch count"))?;
    let lr = f64::from_bits(num(Some(st[3]))?);
    let halving = st[5] == "1";
    let prev_ce = match st[7] {
        "-" => None,
        h => Some(f64::from_bits(num(Some(h))?)),
    };
    let count = |line: &str, key: &str| -> Result<usize, TrainError> {
        line.strip_prefix(key)
            .and_then(|n| n.trim().parse().ok())
            .ok_or_else(|| bad(&format!("expected '{key}'")))
    };
    let nh = count(next()?, "history ")?;
    let mut history = vec![];
    for _ in 0..nh {
        history.push(next()?.to_string());
    }
    let nl = count(next()?, "layers ")?;
    let mut layers = vec![];
    for _ in 0..nl {
        let shape: Vec<usize> = next()?
            .strip_prefix("shape ")
            .ok_or_else(|| bad("expected 'shape'"))?
            .split(' ')
            .map(|v| v.parse().map_err(|_| bad("bad shape")))
            .collect::<Result<_, _>>()?;
        if shape.len() != 2 {
            return Err(bad("bad shape"));
        }
        let mut arrays = vec![];
        for name in ["w", "b", "vw", "vb", "cw", "cb"] {
            let n = count(next()?, &format!("{name} "))?;
            let mut v = Vec::with_capacity(n);
            while v.len() < n {
                for h in next()?.split(' ') {
                    v.push(num(Some(h))?);
                }
            }
            if v.len() != n {
                return Err(bad("array length"));
            }
            arrays.push(v);
        }
        let mut it = arrays.into_iter();
        let mut take = || it.next().unwrap();
        layers.push(Layer {
            w: Mat {
                rows: shape[0],
                cols: shape[1],
                data: take(),
            },
            b: take(),
            vw: take(),
            vb: take(),
            cw: take(),
            cb: take(),
        });
    }
    Ok(State {
        epochs_done,
        lr,
        halving,
        prev_ce,
        history,
        model: Model { layers },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_damage_or_another_configuration() {
        let layer = Layer {
            w: Mat {
                rows: 2,
                cols: 3,
                data: vec![1, 2, 3, 4, 5, 0xffff_ffff],
            },
            b: vec![7, 8],
            vw: vec![0; 6],
            vb: vec![9, 10],
            cw: vec![11; 6],
            cb: vec![0, 1],
        };
        let s = State {
            epochs_done: 3,
            lr: 0.05,
            halving: true,
            prev_ce: Some(0.25),
            history: vec!["{\"epoch\": 1}".into()],
            model: Model {
                layers: vec![layer.clone(), layer],
            },
        };
        let dir = std::env::temp_dir().join(format!("lpgen-ck-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("run.lpck");
        save(&p, "cfg A", &s).unwrap();
        assert_eq!(load(&p, "cfg A").unwrap(), s);
        let e = load(&p, "cfg B").unwrap_err().0;
        assert!(e.contains("another configuration"), "{e}");
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, &text[..text.len() / 2]).unwrap();
        assert!(load(&p, "cfg A").unwrap_err().0.contains("unusable"));
        std::fs::write(
            &p,
            text.replacen("\n5 ", "\n6 ", 1).replacen(" 5 ", " 6 ", 1),
        )
        .unwrap();
        assert!(load(&p, "cfg A").unwrap_err().0.contains("digest"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
