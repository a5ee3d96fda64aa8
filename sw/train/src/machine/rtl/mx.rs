//! `--format mx:ELEM[:bK]` on the rtl backend (issue 33): every MX product on a generated
//! `array --format mx:…` (the `mx` PE, docs/rtl.md). The host quantizes every row of A and
//! every column of B into blocks along the reduction dimension, as the golden machine does
//! (`machine::mx_vectors`); step k of a tile gives PE (r, c) block k of row i0 + r of A and
//! of column j0 + c of B (a short last block padded with element code 0, which adds an exact
//! zero; the zero block, all bits 0, beyond the matrix), and reads back f32 words.

use lpgen_golden::mx::{MxBlock, MxFormat};
use lpgen_hdl::{Params, PeKind, Unit};
use lpgen_verif::layout::put_bits;

use super::tiles::{stream, Operands};
use super::{Device, Rtl};
use crate::machine::{check_shapes, mx_vectors, Mat, View};
use crate::TrainError;

impl Rtl {
    /// The `array --pe mx` design of `mx` (built on first use).
    fn mx_array(&mut self, mx: MxFormat) -> Result<&mut Device, TrainError> {
        if !self.mx_arrays.contains_key(&mx) {
            self.check_array_stages(PeKind::Mx)?;
            let mut p = Params::parse(Unit::Array, &mx.to_string())
                .map_err(|e| TrainError(e.0))?
                .stages(self.array_stages);
            (p.rows, p.cols) = (self.rows, self.cols);
            let d = Device::build(&self.tc, &p)?;
            self.mx_arrays.insert(mx, d);
        }
        Ok(self.mx_arrays.get_mut(&mx).expect("inserted"))
    }

    /// How many `array --pe mx` designs this machine has built.
    pub fn mx_designs(&self) -> usize {
        self.mx_arrays.len()
    }

    /// How many MX products ran on them.
    pub fn mx_products(&self) -> u64 {
        self.mx_products
    }

    /// C = A·B of f32 words with MX operands, on the `mx` array.
    pub(super) fn mx_product(
        &mut self,
        mx: MxFormat,
        a: View<'_, u64>,
        b: View<'_, u64>,
    ) -> Result<Mat, TrainError> {
        check_shapes(a, b)?;
        let (qa, qb) = mx_vectors(mx, a, b, 1);
        let (ba, bb): (Vec<Vec<MxBlock>>, Vec<Vec<MxBlock>>) = (
            qa.iter().map(|v| v.blocks()).collect(),
            qb.iter().map(|v| v.blocks()).collect(),
        );
        let w = mx.elem_width();
        let bits = 8 + mx.block as u32 * w;
        // Block k of vector i at bit `pos`; nothing (the zero block) beyond the matrix.
        let put = |buf: &mut [u64], pos: usize, blocks: Option<&Vec<MxBlock>>, k: usize| {
            if let Some(blk) = blocks.map(|v| &v[k]) {
                put_bits(buf, pos, 8, u64::from(blk.scale));
                for (i, &c) in blk.codes.iter().enumerate() {
                    put_bits(buf, pos + 8 + i * w as usize, w, u64::from(c));
                }
            }
        };
        let put_a = |buf: &mut [u64], pos: usize, i: usize, k: usize| put(buf, pos, ba.get(i), k);
        let put_b = |buf: &mut [u64], pos: usize, k: usize, j: usize| put(buf, pos, bb.get(j), k);
        let ops = Operands {
            m: a.rows(),
            k: a.cols().div_ceil(mx.block),
            n: b.cols(),
            bits,
            a: &put_a,
            b: &put_b,
            out_bits: 32,
            states: None,
        };
        let shape = (self.rows as usize, self.cols as usize);
        let dev = self.mx_array(mx)?;
        let (c, _) = stream(dev, shape, &ops, 0, None)?;
        self.mx_products += 1;
        Ok(c)
    }
}
