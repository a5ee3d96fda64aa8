//! IDX datasets (the original MNIST file format, gzip-compressed or not): images `[n, r, c]`
//! of u8 (magic 0x00000803) and labels `[n]` of u8 (magic 0x00000801).

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use crate::TrainError;

/// Images and labels of one split.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// n × dim pixels, row-major.
    pub images: Vec<u8>,
    pub labels: Vec<u8>,
    pub dim: usize,
    /// Image rows and columns (`dim` = rows × cols).
    pub shape: (usize, usize),
    pub classes: usize,
}

impl Dataset {
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    pub fn image(&self, i: usize) -> &[u8] {
        &self.images[i * self.dim..(i + 1) * self.dim]
    }

    /// FNV-1a over the shape, the labels and the pixels: names the data a checkpoint was
    /// trained on.
    pub fn digest(&self) -> u64 {
        let dims = [self.shape.0 as u64, self.shape.1 as u64, self.len() as u64];
        let shape = dims.iter().flat_map(|d| d.to_le_bytes());
        crate::checkpoint::fnv1a64(
            shape
                .chain(self.labels.iter().copied())
                .chain(self.images.iter().copied()),
        )
    }

    /// The first `n` samples (all if fewer).
    pub fn truncate(&mut self, n: usize) {
        let n = n.min(self.len());
        self.labels.truncate(n);
        self.images.truncate(n * self.dim);
    }
}

/// `train` or `t10k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    Train,
    Test,
}

impl Split {
    fn prefix(self) -> &'static str {
        match self {
            Split::Train => "train",
            Split::Test => "t10k",
        }
    }
}

/// The file `DIR/<prefix>-<kind>-idx<d>-ubyte[.gz]` that exists (gzip preferred).
fn find(dir: &Path, split: Split, kind: &str, d: u32) -> Result<PathBuf, TrainError> {
    let base = format!("{}-{kind}-idx{d}-ubyte", split.prefix());
    for name in [format!("{base}.gz"), base.clone()] {
        let p = dir.join(&name);
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(TrainError(format!(
        "dataset {}: no {base}.gz or {base} (expected IDX files, e.g. ../shared/datasets/mnist-10k)",
        dir.display()
    )))
}

/// The decoded bytes of a gzip file: every member of a multi-member file (what
/// `cat a.gz b.gz` or pigz make) in turn, read from `R` only as far as the reader asks;
/// anything after the last member that is not a gzip member is an error.
struct Members<R: BufRead> {
    /// The stream between members (None once it has ended).
    rest: Option<R>,
    member: Option<flate2::bufread::GzDecoder<R>>,
}

impl<R: BufRead> Read for Members<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if let Some(m) = &mut self.member {
                let n = m.read(buf)?;
                if n > 0 || buf.is_empty() {
                    return Ok(n);
                }
                self.rest = self.member.take().map(|m| m.into_inner());
            }
            let Some(mut rest) = self.rest.take() else {
                return Ok(0);
            };
            let head = rest.fill_buf()?;
            if head.is_empty() {
                return Ok(0);
            }
            if !starts_member(head) {
                let trailing = std::io::copy(&mut rest, &mut std::io::sink())?;
                return Err(std::io::Error::other(format!(
                    "{trailing} bytes of trailing data after the last gzip member"
                )));
            }
            self.member = Some(flate2::bufread::GzDecoder::new(rest));
        }
    }
}

/// Whether the bytes at hand (`head`, what a buffer holds) start a gzip member: 1f 8b, the
/// second byte the decoder's to check where the buffer ends before it.
fn starts_member(head: &[u8]) -> bool {
    head.first() == Some(&0x1f) && head.get(1).is_none_or(|&b| b == 0x8b)
}

/// The bytes `r` holds, decoded as they are read if they are gzip-compressed.
fn decoded<'a, R: BufRead + 'a>(mut r: R) -> std::io::Result<Box<dyn Read + 'a>> {
    Ok(match starts_member(r.fill_buf()?) {
        true => Box::new(Members {
            rest: Some(r),
            member: None,
        }),
        false => Box::new(r),
    })
}

/// The file at `path`, decoded as it is read if it is gzip-compressed (a limited read
/// reads no more of the file than it decodes).
fn open(path: &Path) -> Result<Box<dyn Read>, TrainError> {
    let cannot = |e: std::io::Error| TrainError(format!("cannot read {}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(cannot)?;
    decoded(std::io::BufReader::with_capacity(1 << 16, file)).map_err(cannot)
}

/// Reads what `r` holds to its end (a decoding error named as corrupt data of `path`).
fn read_to_end(path: &Path, r: &mut dyn Read, out: &mut Vec<u8>) -> Result<(), TrainError> {
    r.read_to_end(out).map(|_| ()).map_err(|e| {
        TrainError(format!(
            "{}: corrupt gzip data ({e}); re-fetch the file",
            path.display()
        ))
    })
}

#[cfg(test)]
fn read_all(path: &Path) -> Result<Vec<u8>, TrainError> {
    let mut out = vec![];
    read_to_end(path, &mut open(path)?, &mut out)?;
    Ok(out)
}

/// Parses an IDX file of u8 data with the given number of dimensions: (dims, data). Every
/// dimension must be at least 1 and their product (checked) the length of the body.
#[cfg(test)]
fn parse_idx(path: &Path, bytes: &[u8], ndim: u8) -> Result<(Vec<usize>, Vec<u8>), TrainError> {
    read_idx(path, &mut &bytes[..], ndim, None)
}

/// Reads an IDX file of u8 data with the given number of dimensions from `r`: (dims, data),
/// the data of the first `limit` samples only (all if None or fewer). Every dimension must be
/// at least 1; the body must hold every sample read, and (unlimited) exactly the header's.
/// A limited read decodes no further than it needs.
fn read_idx(
    path: &Path,
    r: &mut dyn Read,
    ndim: u8,
    limit: Option<usize>,
) -> Result<(Vec<usize>, Vec<u8>), TrainError> {
    let bad = |what: &str| TrainError(format!("{}: not an IDX file ({what})", path.display()));
    let mut header = Vec::new();
    read_to_end(path, &mut r.take(4 + 4 * ndim as u64), &mut header)?;
    if header.len() < 4 + 4 * ndim as usize {
        return Err(bad("too short for its header"));
    }
    let bytes = &header[..];
    if bytes[0] != 0 || bytes[1] != 0 || bytes[2] != 0x08 || bytes[3] != ndim {
        return Err(bad(&format!(
            "magic {:02x}{:02x}{:02x}{:02x}, expected 000008{ndim:02x}",
            bytes[0], bytes[1], bytes[2], bytes[3]
        )));
    }
    let dims: Vec<usize> = (0..ndim as usize)
        .map(|i| {
            let o = 4 + 4 * i;
            u32::from_be_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]) as usize
        })
        .collect();
    let shape = dims
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("x");
    if dims.contains(&0) {
        return Err(TrainError(format!(
            "{}: IDX dimensions {shape} include a zero (no samples or empty images)",
            path.display()
        )));
    }
    let sample = dims[1..].iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    let count = sample.and_then(|s| s.checked_mul(dims[0]));
    let mismatch = |held: usize| {
        bad(&format!(
            "header dimensions {shape} do not match the {held} bytes of data the file holds"
        ))
    };
    let (Some(sample), Some(count)) = (sample, count) else {
        let mut body = Vec::new();
        read_to_end(path, r, &mut body)?;
        return Err(mismatch(body.len()));
    };
    let want = limit.map_or(count, |n| n.min(dims[0]) * sample);
    // Grown as the data arrives: a header may claim more than the file holds.
    let mut body = Vec::new();
    read_to_end(path, &mut r.take(want as u64), &mut body)?;
    if limit.is_none() || body.len() < want {
        // The whole file, to say how much it holds, or to find data past the header's.
        read_to_end(path, r, &mut body)?;
        if body.len() != count {
            return Err(mismatch(body.len()));
        }
    }
    Ok((dims, body))
}

/// Loads one split of the IDX dataset in `dir`.
pub fn load(dir: &Path, split: Split) -> Result<Dataset, TrainError> {
    load_limited(dir, split, None)
}

/// Loads the first `limit` samples (all if None) of one split of the IDX dataset in `dir`,
/// decoding no more of its images than those. The class count is the whole split's, as
/// [`load`] gives it, so a limited load builds the same network.
pub fn load_limited(dir: &Path, split: Split, limit: Option<usize>) -> Result<Dataset, TrainError> {
    let ip = find(dir, split, "images", 3)?;
    let lp = find(dir, split, "labels", 1)?;
    let (ldims, mut labels) = read_idx(&lp, &mut open(&lp)?, 1, None)?;
    let (idims, images) = read_idx(&ip, &mut open(&ip)?, 3, limit)?;
    if idims[0] != ldims[0] {
        return Err(TrainError(format!(
            "dataset {}: {} images but {} labels",
            dir.display(),
            idims[0],
            ldims[0]
        )));
    }
    let classes = classes(&labels);
    labels.truncate(limit.unwrap_or(usize::MAX));
    Ok(Dataset {
        classes,
        images,
        labels,
        dim: idims[1] * idims[2],
        shape: (idims[1], idims[2]),
    })
}

/// The class count of `labels`: MNIST's ten, or more when a label goes above 9 (IDX labels
/// are bytes, so up to 256). Ten at least, so a small split that happens to lack label 9
/// builds the same network as the full dataset.
fn classes(labels: &[u8]) -> usize {
    labels
        .iter()
        .map(|&l| l as usize + 1)
        .max()
        .unwrap_or(0)
        .max(10)
}

/// Loads the training and test splits of `dir`, which must hold images of one shape.
pub fn load_pair(dir: &Path) -> Result<(Dataset, Dataset), TrainError> {
    load_pair_limited(dir, None, None)
}

/// [`load_pair`] of the first `train` and `test` samples of each split (all if None).
pub fn load_pair_limited(
    dir: &Path,
    train: Option<usize>,
    test: Option<usize>,
) -> Result<(Dataset, Dataset), TrainError> {
    let train = load_limited(dir, Split::Train, train)?;
    let test = load_limited(dir, Split::Test, test)?;
    if train.shape != test.shape {
        return Err(TrainError(format!(
            "dataset {}: training images are {}x{} but test images {}x{}; both splits need one shape",
            dir.display(),
            train.shape.0,
            train.shape.1,
            test.shape.0,
            test.shape.1
        )));
    }
    // One network for both splits: the larger class count of the two.
    let classes = train.classes.max(test.classes);
    let (train, test) = (Dataset { classes, ..train }, Dataset { classes, ..test });
    Ok((train, test))
}

/// Per-pixel mean and standard deviation over `d` (seed 000 §4.2.1: inputs are normalised
/// to zero mean and unit variance); a pixel that never varies gets a deviation of 1.
pub fn moments(d: &Dataset) -> (Vec<f64>, Vec<f64>) {
    let n = d.len() as f64;
    let mut mean = vec![0.0; d.dim];
    let mut sq = vec![0.0; d.dim];
    for i in 0..d.len() {
        for (j, &p) in d.image(i).iter().enumerate() {
            let x = p as f64 / 255.0;
            mean[j] += x;
            sq[j] += x * x;
        }
    }
    let sd = mean
        .iter_mut()
        .zip(&sq)
        .map(|(m, &s)| {
            *m /= n;
            let var = s / n - *m * *m;
            if var > 1e-12 {
                var.sqrt()
            } else {
                1.0
            }
        })
        .collect();
    (mean, sd)
}

/// One mean and deviation over every pixel of `d`, repeated per pixel.
pub fn global_moments(d: &Dataset) -> (Vec<f64>, Vec<f64>) {
    let n = d.images.len() as f64;
    let (mut s, mut sq) = (0.0, 0.0);
    for &p in &d.images {
        let x = p as f64 / 255.0;
        s += x;
        sq += x * x;
    }
    let mean = s / n;
    let sd = (sq / n - mean * mean).max(1e-12).sqrt();
    (vec![mean; d.dim], vec![sd; d.dim])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx(magic: u8, dims: &[u32], body: &[u8]) -> Vec<u8> {
        let mut v = vec![0, 0, 8, magic];
        for d in dims {
            v.extend(d.to_be_bytes());
        }
        v.extend(body);
        v
    }

    #[test]
    fn parses_and_refuses_idx_files() {
        let p = Path::new("x");
        let ok = idx(3, &[2, 1, 2], &[1, 2, 3, 4]);
        let (d, b) = parse_idx(p, &ok, 3).unwrap();
        assert_eq!((d, b), (vec![2, 1, 2], vec![1, 2, 3, 4]));
        let short = idx(3, &[2, 1, 2], &[1, 2, 3]);
        assert!(parse_idx(p, &short, 3)
            .unwrap_err()
            .0
            .contains("the 3 bytes"));
        // 4 x 2^31 x 2^31 wraps a 64-bit product to 0, which an empty body would match.
        let wraps = idx(3, &[4, 1 << 31, 1 << 31], &[]);
        assert!(parse_idx(p, &wraps, 3)
            .unwrap_err()
            .0
            .contains("do not match"));
        // A header claiming far more than the file holds is refused, not allocated for.
        let huge = idx(3, &[u32::MAX, 28, 28], &[1, 2, 3]);
        for limit in [None, Some(5)] {
            let e = read_idx(p, &mut &huge[..], 3, limit).unwrap_err().0;
            assert!(e.contains("do not match the 3 bytes"), "{limit:?}: {e}");
        }
        let empty = idx(3, &[200, 0, 28], &[]);
        assert!(parse_idx(p, &empty, 3).unwrap_err().0.contains("zero"));
        let wrong = idx(1, &[2, 1, 2], &[1, 2, 3, 4]);
        assert!(parse_idx(p, &wrong, 3).unwrap_err().0.contains("magic"));
        assert!(parse_idx(p, &[0, 0], 1)
            .unwrap_err()
            .0
            .contains("too short"));
    }

    /// `b` as one gzip member.
    fn gz(b: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(vec![], flate2::Compression::fast());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn reads_multi_member_gzip_and_refuses_trailing_data() {
        let dir = std::env::temp_dir().join(format!("lpgen-gz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.gz");
        let mut two = gz(b"abc");
        two.extend(gz(b"def"));
        std::fs::write(&p, &two).unwrap();
        assert_eq!(read_all(&p).unwrap(), b"abcdef");
        two.extend(b"garbage");
        std::fs::write(&p, &two).unwrap();
        let e = read_all(&p).unwrap_err().0;
        assert!(e.contains("7 bytes of trailing data"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
        // Through buffers that end anywhere in a member's header or between members.
        for capacity in [1, 2, 3, 7, 64] {
            let read = |bytes: &[u8]| {
                let mut out = vec![];
                let r = std::io::BufReader::with_capacity(capacity, bytes);
                decoded(r).unwrap().read_to_end(&mut out).map(|_| out)
            };
            assert_eq!(
                read(&two[..two.len() - 7]).unwrap(),
                b"abcdef",
                "{capacity}"
            );
            let e = read(&two).unwrap_err().to_string();
            assert!(e.contains("7 bytes of trailing data"), "{capacity}: {e}");
        }
    }

    #[test]
    fn a_limited_load_is_the_first_samples_of_the_whole() {
        let dir = std::env::temp_dir().join(format!("lpgen-limit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pixels: Vec<u8> = (0..5 * 6).map(|i| (i * 7 % 256) as u8).collect();
        let images = idx(3, &[5, 2, 3], &pixels);
        // Two members, split inside the third image: a limited read crosses into the second.
        let mut two = gz(&images[..16 + 14]);
        two.extend(gz(&images[16 + 14..]));
        std::fs::write(dir.join("train-images-idx3-ubyte.gz"), &two).unwrap();
        let labels = idx(1, &[5], &[3, 1, 4, 1, 12]);
        std::fs::write(dir.join("train-labels-idx1-ubyte"), labels).unwrap();
        let whole = load(&dir, Split::Train).unwrap();
        for n in [0, 1, 3, 5, 9] {
            let part = load_limited(&dir, Split::Train, Some(n)).unwrap();
            let mut cut = whole.clone();
            cut.truncate(n);
            assert_eq!(
                (&part.images, &part.labels),
                (&cut.images, &cut.labels),
                "{n}"
            );
            assert_eq!((part.classes, part.shape, part.dim), (13, (2, 3), 6), "{n}");
        }
        // A file shorter than its header says is refused, limited or not, when the read
        // reaches its end.
        std::fs::write(
            dir.join("train-images-idx3-ubyte.gz"),
            gz(&images[..16 + 20]),
        )
        .unwrap();
        for n in [Some(4), None] {
            let e = load_limited(&dir, Split::Train, n).unwrap_err().0;
            assert!(e.contains("do not match the 20 bytes"), "{n:?}: {e}");
        }
        assert!(load_limited(&dir, Split::Train, Some(3)).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn loads_the_shared_dataset_when_present() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/mnist-10k");
        if !dir.is_dir() {
            eprintln!("skipped: {} not present", dir.display());
            return;
        }
        let d = load(&dir, Split::Test).unwrap();
        assert_eq!((d.len(), d.dim), (1996, 784));
        assert!(d.labels.iter().all(|&l| l < 10));
        assert_eq!(d.classes, 10);
    }

    #[test]
    fn both_splits_get_the_larger_class_count() {
        let dir = std::env::temp_dir().join(format!("lpgen-classes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (split, labels) in [("train", [19u8, 0]), ("t10k", [4, 1])] {
            let images = idx(3, &[2, 1, 1], &[7, 8]);
            std::fs::write(dir.join(format!("{split}-images-idx3-ubyte")), images).unwrap();
            let labels = idx(1, &[2], &labels);
            std::fs::write(dir.join(format!("{split}-labels-idx1-ubyte")), labels).unwrap();
        }
        assert_eq!(load(&dir, Split::Test).unwrap().classes, 10);
        let (train, test) = load_pair(&dir).unwrap();
        assert_eq!((train.classes, test.classes), (20, 20));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn classes_are_ten_or_the_largest_label_plus_one() {
        assert_eq!(classes(&[0, 3, 1]), 10);
        assert_eq!(classes(&[]), 10);
        assert_eq!(classes(&[9, 0]), 10);
        assert_eq!(classes(&[10, 0]), 11);
        assert_eq!(classes(&[199, 5]), 200);
        assert_eq!(classes(&[255]), 256);
    }
}
