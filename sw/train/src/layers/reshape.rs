//! The words a layer moves on the host, each a copy: im2col rows of a batch of images, the
//! channel-major reshapes, and the flipped kernels of a convolution's input gradient.

use crate::machine::{Mat, Word};

/// The im2col rows of a batch of images (each row of `x` is channels × height × width,
/// channel-major): one row per sample and output position (sample-major, then y, then x) of
/// a `kernel` × `kernel` window at stride 1 over the image padded by `pad` words `zero`; its
/// columns are channel, then window row, then window column (the order of a filter's
/// weights).
pub fn im2col<W: Word>(
    x: &Mat<W>,
    shape: (usize, usize, usize),
    kernel: usize,
    pad: usize,
    zero: W,
) -> Mat<W> {
    // LeNet-5's and most CNNs' kernels as constants: a window line is then a fixed-size copy
    // of a few words, not a call to memcpy.
    match kernel {
        3 => windows::<W, 3>(x, shape, pad, zero),
        5 => windows::<W, 5>(x, shape, pad, zero),
        _ => windows_of(x, shape, kernel, pad, zero),
    }
}

/// The window's columns x0 .. x0 + kernel of an unpadded row of `width` at output column
/// `ox`: those in lo .. hi of the window lie in the image, the others are padding.
fn in_image(ox: usize, pad: usize, kernel: usize, width: usize) -> (isize, usize, usize) {
    let x0 = ox as isize - pad as isize;
    let lo = (-x0).clamp(0, kernel as isize) as usize;
    let hi = (width as isize - x0).clamp(lo as isize, kernel as isize) as usize;
    (x0, lo, hi)
}

/// [`im2col`] for kernels of K: each window line one array of K words.
fn windows<W: Word, const K: usize>(
    x: &Mat<W>,
    (channels, height, width): (usize, usize, usize),
    pad: usize,
    zero: W,
) -> Mat<W> {
    let out_h = height + 2 * pad + 1 - K;
    let out_w = width + 2 * pad + 1 - K;
    let cols = channels * K * K;
    let mut data = Vec::with_capacity(x.rows * out_h * out_w * cols);
    for sample in 0..x.rows {
        let image = x.row(sample);
        for oy in 0..out_h {
            for ox in 0..out_w {
                let (x0, lo, hi) = in_image(ox, pad, K, width);
                for c in 0..channels {
                    for ky in 0..K {
                        let y = (oy + ky).wrapping_sub(pad);
                        let mut line = [zero; K];
                        if y < height {
                            let base = ((c * height + y) * width) as isize + x0;
                            for (i, w) in line.iter_mut().enumerate() {
                                if (lo..hi).contains(&i) {
                                    *w = image[(base + i as isize) as usize];
                                }
                            }
                        }
                        data.extend_from_slice(&line);
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

/// [`im2col`] for any kernel: each window line's in-image run copied as a slice.
fn windows_of<W: Word>(
    x: &Mat<W>,
    (channels, height, width): (usize, usize, usize),
    kernel: usize,
    pad: usize,
    zero: W,
) -> Mat<W> {
    let out_h = height + 2 * pad + 1 - kernel;
    let out_w = width + 2 * pad + 1 - kernel;
    let cols = channels * kernel * kernel;
    let mut data = vec![zero; x.rows * out_h * out_w * cols];
    if cols > 0 {
        for (sample, rows) in data.chunks_mut(out_h * out_w * cols).enumerate() {
            let image = x.row(sample);
            for (pos, row) in rows.chunks_mut(cols).enumerate() {
                let (oy, ox) = (pos / out_w, pos % out_w);
                let (x0, lo, hi) = in_image(ox, pad, kernel, width);
                for (c, window) in row.chunks_mut(kernel * kernel).enumerate() {
                    for (ky, line) in window.chunks_mut(kernel).enumerate() {
                        let y = (oy + ky).wrapping_sub(pad);
                        if y < height && lo < hi {
                            let start = (c * height + y) * width + (x0 + lo as isize) as usize;
                            line[lo..hi].copy_from_slice(&image[start..start + hi - lo]);
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
            let samples = rng.gen_range(1..3);
            let x = mat(
                samples,
                c * h * w,
                &(1..=(samples * c * h * w) as u64).collect::<Vec<_>>(),
            );
            assert_eq!(
                im2col(&x, (c, h, w), kernel, pad, 0),
                im2col_reference(&x, (c, h, w), kernel, pad, 0),
                "{c}x{h}x{w} kernel {kernel} pad {pad}"
            );
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
        let c = im2col(&x, (1, 3, 3), 2, 1, 0);
        assert_eq!((c.rows, c.cols), (16, 4));
        assert_eq!(c.row(0), &[0, 0, 0, 1]);
        assert_eq!(c.row(5), &[1, 2, 4, 5]);
        assert_eq!(c.row(15), &[9, 0, 0, 0]);
        // Two channels, no padding: a row holds channel 0's window, then channel 1's.
        let x = mat(1, 8, &[1, 2, 3, 4, 5, 6, 7, 8]);
        let c = im2col(&x, (2, 2, 2), 2, 0, 0);
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
