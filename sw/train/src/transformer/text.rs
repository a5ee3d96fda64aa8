//! `--dataset text:PATH`: a file's bytes as a language model's tokens (vocabulary 256). The
//! last 10 % of the file (⌊len/10⌋ bytes) is the test split, the rest the training split.
//! Each split is cut into windows of context + 1 bytes, window k starting at byte k·context
//! (a window's last byte is the next one's first): its first `context` bytes are the input,
//! its last `context` the tokens to predict. The trainer's epoch order shuffles the windows
//! with the run's seed, so a batch is a set of random windows. A directory stands for its
//! `*.txt` files concatenated in name order (`text:../shared/seeds` is the seed papers' text).

use std::path::Path;

use crate::data::Dataset;
use crate::machine::{Mat, Word};
use crate::TrainError;

/// The vocabulary: bytes.
pub const VOCAB: usize = 256;

/// The windows of `bytes` for `context`, as a dataset of one "image" of context + 1 bytes per
/// window (labels unused: each window holds its own).
fn windows(bytes: &[u8], context: usize) -> Dataset {
    let n = (bytes.len() - 1) / context;
    let images = (0..n)
        .flat_map(|k| bytes[k * context..=(k + 1) * context].iter().copied())
        .collect();
    Dataset {
        images,
        labels: vec![0; n],
        dim: context + 1,
        shape: (1, context + 1),
        classes: VOCAB,
    }
}

/// The training and test windows of the text file (or directory of `*.txt` files) at `path`
/// for `context`.
pub fn load(path: &Path, context: usize) -> Result<(Dataset, Dataset), TrainError> {
    let bytes =
        read(path).map_err(|e| TrainError(format!("cannot read text {}: {e}", path.display())))?;
    split(&bytes, context).map_err(|why| TrainError(format!("text {}: {why}", path.display())))
}

/// The bytes of the file at `path`, or of a directory's `*.txt` files in name order.
fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    if !path.is_dir() {
        return std::fs::read(path);
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path)? {
        let file = entry?.path();
        if file.is_file() && file.extension().is_some_and(|x| x == "txt") {
            files.push(file);
        }
    }
    if files.is_empty() {
        return Err(std::io::Error::other("the directory holds no *.txt file"));
    }
    files.sort();
    let mut bytes = Vec::new();
    for file in files {
        bytes.extend(std::fs::read(file)?);
    }
    Ok(bytes)
}

/// The training and test windows of `bytes` (see the module).
pub fn split(bytes: &[u8], context: usize) -> Result<(Dataset, Dataset), String> {
    if bytes.is_empty() {
        return Err("the file is empty".into());
    }
    if context < 1 {
        return Err(format!("--context {context} must be at least 1"));
    }
    let cut = bytes.len() - bytes.len() / 10;
    let (train, test) = bytes.split_at(cut);
    if test.len() < context + 1 {
        return Err(format!(
            "its test split (the last 10 %, {} bytes) is shorter than a window of --context {context} + 1 bytes: give a longer text or a shorter context",
            test.len()
        ));
    }
    Ok((windows(train, context), windows(test, context)))
}

/// The input and the tokens to predict of the windows `idx` of `d`: one row per window, each
/// word carrying a byte in its bit pattern (`transformer::tokens`), and the next byte of every
/// position.
pub fn batch<W: Word>(d: &Dataset, idx: &[usize]) -> (Mat<W>, Vec<u8>) {
    let context = d.dim - 1;
    let mut data = Vec::with_capacity(idx.len() * context);
    let mut labels = Vec::with_capacity(idx.len() * context);
    for &i in idx {
        let w = d.image(i);
        data.extend(w[..context].iter().map(|&b| W::from_bits(b as u64)));
        labels.extend_from_slice(&w[1..]);
    }
    let x = Mat {
        rows: idx.len(),
        cols: context,
        data,
    };
    (x, labels)
}

/// The order-0 entropy of `bytes` in bits per byte (the bpc of predicting each byte by its
/// frequency alone), for reports.
pub fn entropy(bytes: &[u8]) -> f64 {
    let mut counts = [0usize; VOCAB];
    for &b in bytes {
        counts[b as usize] += 1;
    }
    let n = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}
