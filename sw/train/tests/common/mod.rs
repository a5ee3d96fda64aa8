//! What several training tests share: a small IDX dataset.

use std::path::Path;

/// A small IDX dataset: 4×4 images whose label is the brightest quadrant.
pub fn write_dataset(dir: &Path, n: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let mut seed = 12345u64;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as u8
    };
    for split in ["train", "t10k"] {
        let mut img = vec![0, 0, 8, 3];
        for d in [n as u32, 4, 4] {
            img.extend(d.to_be_bytes());
        }
        let mut lab = vec![0, 0, 8, 1];
        lab.extend((n as u32).to_be_bytes());
        for _ in 0..n {
            let label = next() % 4;
            for y in 0..4 {
                for x in 0..4 {
                    let q = (y / 2) * 2 + x / 2;
                    img.push(if q == label {
                        200 + next() % 50
                    } else {
                        next() % 100
                    });
                }
            }
            lab.push(label);
        }
        std::fs::write(dir.join(format!("{split}-images-idx3-ubyte")), img).unwrap();
        std::fs::write(dir.join(format!("{split}-labels-idx1-ubyte")), lab).unwrap();
    }
}
