//! The words a layer moves on the host, each a copy: im2col rows of a batch of images, the
//! channel-major reshapes, and the flipped kernels of a convolution's input gradient.

use crate::machine::{fill_in_parallel, Mat, Word};
use std::mem::MaybeUninit;

/// The im2col rows of a batch of images (each row of `x` is channels × height × width,
/// channel-major): one row per sample and output position (sample-major, then y, then x) of
/// a `kernel` × `kernel` window at stride 1 over the image padded by `pad` words `zero`; its
/// columns are channel, then window row, then window column (the order of a filter's
/// weights).
pub fn im2col<W: Word>(
    x: &Mat<W>,
    (channels, height, width): (usize, usize, usize),
    kernel: usize,
    pad: usize,
    zero: W,
    threads: usize,
) -> Mat<W> {
    let padded = (channels, height + 2 * pad, width + 2 * pad);
    let out_h = padded.1 + 1 - kernel;
    let out_w = padded.2 + 1 - kernel;
    let cols = channels * kernel * kernel;
    let per_sample = out_h * out_w * cols;
    let total = x.rows * per_sample;
    // Not zeroed first: the windows write every word (a serial memset was a twentieth of an
    // epoch, and the one part of im2col the threads did not share).
    let mut data: Vec<W> = Vec::with_capacity(total);
    if per_sample > 0 {
        // Each thread takes whole samples; a copy decides nothing, so any split gives the
        // same words.
        let room = &mut data.spare_capacity_mut()[..total];
        let mut samples: Vec<&mut [MaybeUninit<W>]> = room.chunks_mut(per_sample).collect();
        fill_in_parallel(threads, &mut samples, |first, block| {
            let mut image = vec![zero; channels * padded.1 * padded.2];
            for (sample, rows) in (first..).zip(block.iter_mut()) {
                pad_image(&mut image, x.row(sample), (channels, height, width), pad);
                // LeNet-5's and most CNNs' kernels as constants: a window line is then a
                // fixed-size copy of a few words, not a call to memcpy.
                match kernel {
                    3 => windows(rows, &image, padded, 3),
                    5 => windows(rows, &image, padded, 5),
                    k => windows(rows, &image, padded, k),
                }
            }
        });
    }
    // SAFETY: `windows` wrote every word of every sample's rows: out_h · out_w rows of
    // `cols` words each, every row cut into channels × kernel lines of `kernel` words, each
    // line written (the chunks are exact, so no word is left over).
    unsafe { data.set_len(total) };
    Mat {
        rows: x.rows * out_h * out_w,
        cols,
        data,
    }
}

/// Copies `image` (channels × height × width) into the interior of `padded`, whose border of
/// `pad` words all round holds padding and is never written.
fn pad_image<W: Word>(
    padded: &mut [W],
    image: &[W],
    (channels, height, width): (usize, usize, usize),
    pad: usize,
) {
    let (ph, pw) = (height + 2 * pad, width + 2 * pad);
    for c in 0..channels {
        for y in 0..height {
            let to = (c * ph + y + pad) * pw + pad;
            padded[to..to + width].copy_from_slice(&image[(c * height + y) * width..][..width]);
        }
    }
}

/// One sample's im2col rows from its padded image: each window line a copy of `kernel`
/// words of the padded image, so that every word of `rows` is written.
#[inline(always)]
fn windows<W: Word>(
    rows: &mut [MaybeUninit<W>],
    image: &[W],
    (channels, ph, pw): (usize, usize, usize),
    kernel: usize,
) {
    let out_w = pw + 1 - kernel;
    let cols = channels * kernel * kernel;
    for (pos, row) in rows.chunks_exact_mut(cols).enumerate() {
        let (oy, ox) = (pos / out_w, pos % out_w);
        for (c, window) in row.chunks_exact_mut(kernel * kernel).enumerate() {
            for (ky, line) in window.chunks_exact_mut(kernel).enumerate() {
                let from = (c * ph + oy + ky) * pw + ox;
                for (to, &w) in line.iter_mut().zip(&image[from..from + kernel]) {
                    to.write(w);
                }
            }
        }
    }
}

/// Rows of (sample, position) with one column per channel → one row per sample, channel-major.
pub fn to_channel_major<W: Word>(y: &Mat<W>, samples: usize) -> Mat<W> {
    let (channels, positions) = (y.cols, y.rows / samples);
    let mut data = Vec::with_capacity(y.data.len());
    for s in 0..samples {
        for c in 0..channels {
            data.extend((0..positions).map(|p| y.data[(s * positions + p) * channels + c]));
        }
    }
    Mat {
        rows: samples,
        cols: channels * positions,
        data,
    }
}

/// The inverse of [`to_channel_major`] for `channels` channels.
pub fn from_channel_major<W: Word>(x: &Mat<W>, channels: usize) -> Mat<W> {
    let positions = x.cols / channels;
    let mut data = Vec::with_capacity(x.data.len());
    for s in 0..x.rows {
        let row = x.row(s);
        for p in 0..positions {
            data.extend((0..channels).map(|c| row[c * positions + p]));
        }
    }
    Mat {
        rows: x.rows * positions,
        cols: channels,
        data,
    }
}

/// The kernels of a convolution's input gradient: W (filters × channels·k²) rotated by 180°
/// and with filters and channels exchanged (channels × filters·k²). A convolution of the
/// error padded by k − 1 − pad with these kernels is the gradient of the input, each element
/// one dot product.
pub fn flipped_kernels<W: Word>(w: &Mat<W>, channels: usize, kernel: usize) -> Mat<W> {
    let filters = w.rows;
    let k2 = kernel * kernel;
    let mut data = Vec::with_capacity(w.data.len());
    for c in 0..channels {
        for f in 0..filters {
            for ky in 0..kernel {
                for kx in 0..kernel {
                    let (fy, fx) = (kernel - 1 - ky, kernel - 1 - kx);
                    data.push(w.at(f, c * k2 + fy * kernel + fx));
                }
            }
        }
    }
    Mat {
        rows: channels,
        cols: filters * k2,
        data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The definition of [`im2col`]: every element of every window, one at a time.
    fn im2col_reference<W: Word>(
        x: &Mat<W>,
        (channels, height, width): (usize, usize, usize),
        kernel: usize,
        pad: usize,
        zero: W,
    ) -> Mat<W> {
        let out_h = height + 2 * pad + 1 - kernel;
        let out_w = width + 2 * pad + 1 - kernel;
        let cols = channels * kernel * kernel;
        let mut data = Vec::with_capacity(x.rows * out_h * out_w * cols);
        for sample in 0..x.rows {
            let image = x.row(sample);
            for oy in 0..out_h {
                for ox in 0..out_w {
                    for c in 0..channels {
                        for ky in 0..kernel {
                            // Coordinates in the unpadded image (out of range: padding).
                            let y = (oy + ky).wrapping_sub(pad);
                            for kx in 0..kernel {
                                let x = (ox + kx).wrapping_sub(pad);
                                data.push(if y < height && x < width {
                                    image[(c * height + y) * width + x]
                                } else {
                                    zero
                                });
                            }
                        }
                    }
                }
            }
        }
        Mat {
            rows: x.rows * out_h * out_w,
            cols,
            data,
        }
    }

    /// The fast copy of runs is the definition, element for element: random images, kernels
    /// wider than the image, padding wider than the kernel, one and several channels.
    #[test]
    fn im2col_is_its_definition() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        for _ in 0..300 {
            let (c, h, w) = (
                rng.gen_range(1..4),
                rng.gen_range(1..9),
                rng.gen_range(1..9),
            );
            let kernel = rng.gen_range(1..7);
            let pad = rng.gen_range(0..6);
            if h + 2 * pad < kernel || w + 2 * pad < kernel {
                continue;
            }
            let samples = rng.gen_range(1..6);
            let x = mat(
                samples,
                c * h * w,
                &(1..=(samples * c * h * w) as u64).collect::<Vec<_>>(),
            );
            let reference = im2col_reference(&x, (c, h, w), kernel, pad, 0);
            for threads in [1, 2, 3] {
                assert_eq!(
                    im2col(&x, (c, h, w), kernel, pad, 0, threads),
                    reference,
                    "{c}x{h}x{w} kernel {kernel} pad {pad}, {samples} samples on {threads} threads"
                );
            }
        }
    }

    fn mat(rows: usize, cols: usize, data: &[u64]) -> Mat<u64> {
        Mat {
            rows,
            cols,
            data: data.to_vec(),
        }
    }

    #[test]
    fn im2col_reads_windows_with_padding() {
        // One 1-channel 3×3 image 1..9, a 2×2 kernel, pad 1: 4×4 positions.
        let x = mat(1, 9, &[1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let c = im2col(&x, (1, 3, 3), 2, 1, 0, 1);
        assert_eq!((c.rows, c.cols), (16, 4));
        assert_eq!(c.row(0), &[0, 0, 0, 1]);
        assert_eq!(c.row(5), &[1, 2, 4, 5]);
        assert_eq!(c.row(15), &[9, 0, 0, 0]);
        // Two channels, no padding: a row holds channel 0's window, then channel 1's.
        let x = mat(1, 8, &[1, 2, 3, 4, 5, 6, 7, 8]);
        let c = im2col(&x, (2, 2, 2), 2, 0, 0, 1);
        assert_eq!(c.row(0), &[1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn channel_major_round_trips() {
        let y = mat(4, 3, &(0..12).collect::<Vec<u64>>());
        let x = to_channel_major(&y, 2);
        assert_eq!(x.row(0), &[0, 3, 1, 4, 2, 5]);
        assert_eq!(from_channel_major(&x, 3), y);
    }

    /// The input gradient of a convolution as a product over the padded error with flipped
    /// kernels equals its definition, dX[c,y,x] = Σ dY[f,y+pad−ky,x+pad−kx]·W[f,c,ky,kx], in
    /// exact integers.
    #[test]
    fn flipped_kernels_give_the_input_gradient() {
        let (channels, h, w, filters, kernel, pad) =
            (2usize, 5usize, 4usize, 3usize, 3usize, 1usize);
        let (oh, ow) = (h + 2 * pad + 1 - kernel, w + 2 * pad + 1 - kernel);
        let weights: Vec<i64> = (0..filters * channels * kernel * kernel)
            .map(|i| (i as i64 * 7 % 11) - 5)
            .collect();
        let dy: Vec<i64> = (0..filters * oh * ow)
            .map(|i| (i as i64 * 5 % 13) - 6)
            .collect();
        let as_mat = |rows, cols, v: &[i64]| Mat {
            rows,
            cols,
            data: v.iter().map(|&x| x as u64).collect(),
        };
        let rows = im2col(
            &as_mat(1, dy.len(), &dy),
            (filters, oh, ow),
            kernel,
            kernel - 1 - pad,
            0,
            1,
        );
        let flipped = flipped_kernels(
            &as_mat(filters, channels * kernel * kernel, &weights),
            channels,
            kernel,
        );
        for c in 0..channels {
            for y in 0..h {
                for x in 0..w {
                    let row = rows.row(y * w + x);
                    let got: i64 = (0..row.len())
                        .map(|j| row[j] as i64 * flipped.at(c, j) as i64)
                        .sum();
                    let mut want = 0;
                    for f in 0..filters {
                        for ky in 0..kernel {
                            for kx in 0..kernel {
                                let (yy, xx) =
                                    ((y + pad) as i64 - ky as i64, (x + pad) as i64 - kx as i64);
                                if (0..oh as i64).contains(&yy) && (0..ow as i64).contains(&xx) {
                                    want += dy[(f * oh + yy as usize) * ow + xx as usize]
                                        * weights[(f * channels + c) * kernel * kernel
                                            + ky * kernel
                                            + kx];
                                }
                            }
                        }
                    }
                    assert_eq!(got, want, "c {c} y {y} x {x}");
                }
            }
        }
    }
}
