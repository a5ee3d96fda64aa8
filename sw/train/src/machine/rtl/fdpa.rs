//! `--accumulate matmul=fdpa:…` on the rtl backend (issue 49): every such product on a
//! generated `array --pe fdpa --fdpa MODE` (docs/rtl.md). Step k of a tile gives PE (r, c)
//! words k·L .. k·L + L − 1 of row i0 + r of A and of column j0 + c of B (a last chunk short
//! of L padded with +0 words, which change nothing: a zero product stands at e_zero, never
//! above C's exponent; zero chunks beyond the matrix), and reads back words of the format:
//! the golden `FdpaPlan::dots_in_format`, the golden machine's product.

use lpgen_golden::float::fdpa::Fdpa;
use lpgen_golden::Format;
use lpgen_hdl::{Params, PeKind, Unit};
use lpgen_verif::layout::put_bits;

use super::tiles::{stream, Operands};
use super::{Device, Rtl};
use crate::machine::Mat;
use crate::TrainError;

impl Rtl {
    /// The `array --pe fdpa` design of (f, mode) (built on first use), and its chunk length.
    fn fdpa_array(&mut self, f: Format, mode: Fdpa) -> Result<(&mut Device, u32), TrainError> {
        let Format::Float(ff) = f else {
            return Err(TrainError(format!(
                "--accumulate matmul={mode}: fdpa is for float formats, not {f}"
            )));
        };
        let l = mode.plan(&ff).map_err(|e| TrainError(e.0))?.chunk.l;
        if !self.fdpa_arrays.contains_key(&(f, mode)) {
            self.check_array_stages(PeKind::Fdpa)?;
            let mut p = Params::new(Unit::Array, f).stages(self.array_stages);
            (p.rows, p.cols, p.pe) = (self.rows, self.cols, PeKind::Fdpa);
            p.fdpa = Some(mode);
            let d = Device::build(&self.tc, &p)?;
            self.fdpa_arrays.insert((f, mode), d);
        }
        Ok((self.fdpa_arrays.get_mut(&(f, mode)).expect("inserted"), l))
    }

    /// How many `array --pe fdpa` designs this machine has built.
    pub fn fdpa_designs(&self) -> usize {
        self.fdpa_arrays.len()
    }

    /// C = A·B of words of `f` accumulated by the fdpa mode, on the `fdpa` array.
    pub(super) fn fdpa_product(
        &mut self,
        f: Format,
        mode: Fdpa,
        (a, b): (&Mat, &Mat),
    ) -> Result<Mat, TrainError> {
        let w = f.width();
        let shape = (self.rows as usize, self.cols as usize);
        let (dev, l) = self.fdpa_array(f, mode)?;
        let (l, k_len) = (l as usize, a.cols);
        // Chunk k of row i (column j) at bit `pos`: words k·L.., +0 past K and the matrix.
        let put_a = |buf: &mut [u64], pos: usize, i: usize, k: usize| {
            if i < a.rows {
                for t in 0..l.min(k_len - k * l) {
                    put_bits(buf, pos + t * w as usize, w, a.at(i, k * l + t));
                }
            }
        };
        let put_b = |buf: &mut [u64], pos: usize, k: usize, j: usize| {
            if j < b.cols {
                for t in 0..l.min(k_len - k * l) {
                    put_bits(buf, pos + t * w as usize, w, b.at(k * l + t, j));
                }
            }
        };
        let ops = Operands {
            m: a.rows,
            k: k_len.div_ceil(l),
            n: b.cols,
            bits: l as u32 * w,
            a: &put_a,
            b: &put_b,
            out_bits: w,
            states: None,
        };
        let (c, _) = stream(dev, shape, &ops, 0, None)?;
        Ok(c)
    }
}
