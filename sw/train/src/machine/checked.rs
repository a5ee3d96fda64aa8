//! `--check`: a machine that runs every operation on a device under test and on a reference
//! machine and stops at the first differing word.

use lpgen_golden::onebit::Quantized;
use lpgen_golden::q8::Q8Type;
use lpgen_golden::{AluOp, Format, SumMode};

use lpgen_golden::dfix::DfixFormat;
use lpgen_golden::mx::MxFormat;

use super::{Accumulate, DfixProduct, Machine, Mat, View};
use crate::rounding::Draws;
use crate::TrainError;

/// `--check`: every operation runs on `dut` and on `reference`; the first word that differs
/// stops the run with a report of the operation, the element, and both words.
pub struct Checked<A: Machine<Word = u64>, B: Machine<Word = u64>> {
    pub dut: A,
    pub reference: B,
    /// Operations compared so far.
    pub ops: u64,
}

impl<A: Machine<Word = u64>, B: Machine<Word = u64>> Checked<A, B> {
    fn compare(&mut self, what: String, got: &[u64], want: &[u64]) -> Result<(), TrainError> {
        self.ops += 1;
        if let Some(i) = (0..want.len()).find(|&i| got.get(i) != Some(&want[i])) {
            let g = got.get(i).copied().unwrap_or(0);
            return Err(TrainError(format!(
                "--check: operation {} ({what}) differs at element {i}: {} gives {g:#x}, {} gives {:#x} (first differing bit {})",
                self.ops,
                self.dut.name(),
                self.reference.name(),
                want[i],
                (g ^ want[i]).trailing_zeros()
            )));
        }
        Ok(())
    }
}

impl<A: Machine<Word = u64>, B: Machine<Word = u64>> Machine for Checked<A, B> {
    type Word = u64;

    fn matmul(
        &mut self,
        f: Format,
        acc: Accumulate,
        a: View<'_, u64>,
        b: View<'_, u64>,
    ) -> Result<Mat, TrainError> {
        let got = self.dut.matmul(f, acc, a, b)?;
        let want = self.reference.matmul(f, acc, a, b)?;
        let what = format!(
            "matmul in {f}, {acc:?}, {}x{} by {}x{}, row-major",
            a.rows(),
            a.cols(),
            b.rows(),
            b.cols()
        );
        self.compare(what, &got.data, &want.data)?;
        Ok(got)
    }

    fn sums_exactly(&self, f: Format, acc: Accumulate, words: &[u64]) -> bool {
        self.dut.sums_exactly(f, acc, words) && self.reference.sums_exactly(f, acc, words)
    }

    fn lanes(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[u64],
        b: &[u64],
    ) -> Result<Vec<u64>, TrainError> {
        let got = self.dut.lanes(f, op, a, b)?;
        let want = self.reference.lanes(f, op, a, b)?;
        self.compare(
            format!("{} on {} words of {f}", op.name(), a.len()),
            &got,
            &want,
        )?;
        Ok(got)
    }

    fn convert(&mut self, from: Format, to: Format, a: &[u64]) -> Result<Vec<u64>, TrainError> {
        let got = self.dut.convert(from, to, a)?;
        let want = self.reference.convert(from, to, a)?;
        self.compare(format!("convert {from} to {to}"), &got, &want)?;
        Ok(got)
    }

    fn quantize_1bit(
        &mut self,
        f: Format,
        mode: SumMode,
        g: &[u64],
        shape: (usize, usize),
        residual: Option<&mut [u64]>,
    ) -> Result<Quantized, TrainError> {
        let mut want_residual = residual.as_deref().map(<[u64]>::to_vec);
        let want = self
            .reference
            .quantize_1bit(f, mode, g, shape, want_residual.as_deref_mut())?;
        let mut got_residual = residual;
        let got = self
            .dut
            .quantize_1bit(f, mode, g, shape, got_residual.as_deref_mut())?;
        // One operation: the sign-bit words, then each column's two means, then the residuals.
        let flat = |q: &Quantized, r: Option<&[u64]>| -> Vec<u64> {
            let bits = q.bits.iter().map(|&b| b as u64);
            let means = q.recon.iter().flat_map(|m| [m.neg, m.pos]);
            bits.chain(means)
                .chain(r.unwrap_or(&[]).iter().copied())
                .collect()
        };
        self.compare(
            format!(
                "1-bit quantization of {}x{} words of {f} (sign-bit words, means, residuals)",
                shape.0, shape.1
            ),
            &flat(&got, got_residual.as_deref()),
            &flat(&want, want_residual.as_deref()),
        )?;
        Ok(got)
    }

    fn through_q8(
        &mut self,
        codec: Q8Type,
        f: Format,
        words: &[u64],
        unit: f64,
    ) -> Result<Vec<u64>, TrainError> {
        let got = self.dut.through_q8(codec, f, words, unit)?;
        let want = self.reference.through_q8(codec, f, words, unit)?;
        self.compare(
            format!("{codec} encode and decode of {} words of {f}", words.len()),
            &got,
            &want,
        )?;
        Ok(got)
    }

    fn dfix_matmul(
        &mut self,
        f: DfixFormat,
        a: (&Mat<u64>, i32),
        b: (&Mat<u64>, i32),
        e: i32,
    ) -> Result<DfixProduct, TrainError> {
        let got = self.dut.dfix_matmul(f, a, b, e)?;
        let want = self.reference.dfix_matmul(f, a, b, e)?;
        let what = format!(
            "{f} product, {}x{} at 2^{} by {}x{} at 2^{}, read out at 2^{e}, row-major",
            a.0.rows, a.0.cols, a.1, b.0.rows, b.0.cols, b.1
        );
        self.compare(what.clone(), &got.c.data, &want.c.data)?;
        self.compare(
            format!("{what}: overflow counts at the scale and its half"),
            &[got.overflows, got.overflows_at_half],
            &[want.overflows, want.overflows_at_half],
        )?;
        Ok(got)
    }

    fn mx_matmul(
        &mut self,
        mx: MxFormat,
        a: View<'_, u64>,
        b: View<'_, u64>,
    ) -> Result<Mat, TrainError> {
        let got = self.dut.mx_matmul(mx, a, b)?;
        let want = self.reference.mx_matmul(mx, a, b)?;
        let what = format!(
            "{mx} product of f32 words, {}x{} by {}x{}, row-major",
            a.rows(),
            a.cols(),
            b.rows(),
            b.cols()
        );
        self.compare(what, &got.data, &want.data)?;
        Ok(got)
    }

    fn matmul_rounded(
        &mut self,
        f: Format,
        a: View<'_, u64>,
        b: View<'_, u64>,
        draws: &Draws,
    ) -> Result<Mat, TrainError> {
        let got = self.dut.matmul_rounded(f, a, b, draws)?;
        let want = self.reference.matmul_rounded(f, a, b, draws)?;
        let what = format!(
            "matmul in {f} read out by {}, {}x{} by {}x{}, row-major",
            draws.rounding,
            a.rows(),
            a.cols(),
            b.rows(),
            b.cols()
        );
        self.compare(what, &got.data, &want.data)?;
        Ok(got)
    }

    fn lanes_rounded(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[u64],
        b: &[u64],
        draws: &Draws,
    ) -> Result<Vec<u64>, TrainError> {
        let got = self.dut.lanes_rounded(f, op, a, b, draws)?;
        let want = self.reference.lanes_rounded(f, op, a, b, draws)?;
        self.compare(
            format!(
                "{} on {} words of {f}, {}",
                op.name(),
                a.len(),
                draws.rounding
            ),
            &got,
            &want,
        )?;
        Ok(got)
    }

    fn name(&self) -> String {
        format!("{}+check", self.dut.name())
    }

    fn threads(&self) -> usize {
        self.reference.threads()
    }
}
